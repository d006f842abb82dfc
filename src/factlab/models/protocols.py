"""What the engine and the scorers need from a model, as protocols: a leaf module that every model adapter
(factlab.models.aligner, alignscore_checkpoint, yesno) and every reader of their scores imports, and that imports
none of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: the protocols stay a leaf that loads no framework
    import torch

# Columns of `DistributionScorer.probabilities`; the same order as the aligner's 3-way head (AlignScore's), so that
# one index reads both.
DISTRIBUTION_CLASSES = ("entail", "neutral", "contradict")
ALIGNED = DISTRIBUTION_CLASSES.index("entail")  # the aligner's 3-way head's aligned class
# The aligner's error-type head's classes: FRANK's typology (Pagnoni et al., 2021) as far as factlab's synthetic edits
# teach it (factlab.train.token_labels.ERROR_TYPE_OF): entity, circumstance (number, date, place), predicate/relation,
# coreference (pronoun) and out-of-article errors. FRANK's discourse-link and grammar errors have no edit that makes
# them, so the head cannot name them.
ERROR_TYPES = ("EntE", "CircE", "RelE", "CorefE", "OutE")


class PairScorer(Protocol):
    """What the engine needs from a model: a tokenizer, a length cap, and support probabilities."""

    tokenizer: Any
    max_length: int
    device: torch.device
    identity: str  # names the weights: pairs scored by two scorers with the same identity are shared

    def support(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None
    ) -> torch.Tensor: ...


class DistributionScorer(PairScorer, Protocol):
    """A `PairScorer` that also gives the full 3-way distribution (engine.score_pair_distributions).

    A separate protocol, so that a model giving only support stays a valid `PairScorer`.
    """

    @property
    def distribution_identity(self) -> str: ...  # names the weights and the label mapping: the distribution cache key

    @property
    def has_contradiction(self) -> bool: ...  # False: P(contradict) is always 0 (a 2-label classifier)

    def probabilities(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None
    ) -> torch.Tensor:
        """[batch, 3]: P(entail), P(neutral), P(contradict) (`DISTRIBUTION_CLASSES`), each row summing to 1."""
        ...


def reads_aligner_heads(scorer: object) -> bool:
    """Whether `scorer` is a trained aligner, in any runtime (torch: factlab.models.aligner; OpenVINO:
    factlab.models.openvino_aligner): the one kind of model with a binary, token and type head besides the 3-way."""
    return bool(getattr(scorer, "reads_aligner_heads", False))


def runs_on_arrays(scorer: object) -> bool:
    """Whether `scorer` takes and returns numpy arrays (a compiled runtime) rather than torch tensors."""
    return getattr(scorer, "runtime", "torch") != "torch"

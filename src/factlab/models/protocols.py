"""What the engine and the scorers need from a model, as protocols: a leaf module that every model adapter
(factlab.models.aligner, alignscore_checkpoint, yesno) and every reader of their scores imports, and that imports
none of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: the protocols stay a leaf that loads no framework
    import torch

# Columns of `DistributionScorer.probabilities`; the same order as the aligner's 3-way head, so that
# ALIGNED / NEUTRAL / CONTRADICT index both.
DISTRIBUTION_CLASSES = ("entail", "neutral", "contradict")


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

"""Which head of a trained aligner reads support: the 3-way head (AlignScore's P(aligned), the aligner's own
`support`) or the binary head (aligned / not; trained on every pair with a binary or a 3-way label, the 3-way
ones read as aligned or not: factlab.train.aligner.row_targets; its class 1 is aligned).

A method that reads another head wraps the loaded scorer (`with_support_head`); the aligner module itself
is untouched, so that the training and every other scorer do not depend on this choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from factlab.errors import ConfigError
from factlab.models.aligner import AlignerScorer, PairScorer

SUPPORT_HEADS = ("three_way", "binary")
BINARY_ALIGNED = 1


class BinaryHeadSupport:
    """A trained aligner as a `PairScorer` whose support is P(aligned) of its binary head."""

    def __init__(self, aligner: AlignerScorer) -> None:
        self.aligner = aligner
        self.tokenizer: Any = aligner.tokenizer
        self.max_length = aligner.max_length
        self.device = aligner.device
        # the pair cache shares scores between scorers of one identity: another head's support is another score
        self.identity = f"{aligner.identity}:binary"

    def support(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        types = token_type_ids if self.aligner.token_types else None
        logits = self.aligner.network(input_ids, attention_mask, types)["binary"]
        return torch.softmax(logits.float(), dim=-1)[:, BINARY_ALIGNED]


def with_support_head(scorer: PairScorer, head: str) -> PairScorer:
    """`scorer` read through `head` (SUPPORT_HEADS): itself for three_way; binary needs a trained aligner."""
    if head not in SUPPORT_HEADS:
        raise ConfigError(f"unknown support head {head!r}; expected one of {SUPPORT_HEADS}")
    if head == "three_way":
        return scorer
    if not isinstance(scorer, AlignerScorer):
        raise ConfigError(f"support head {head!r} needs a trained aligner; the model is {scorer.identity} (use three_way)")
    return BinaryHeadSupport(scorer)


def readable_heads(scorer: PairScorer, heads: Sequence[str]) -> list[str]:
    """Those of `heads` that `scorer` can be read through: a hub or checkpoint model has one reading (three_way)."""
    unknown = sorted(set(heads) - set(SUPPORT_HEADS))
    if unknown:
        raise ConfigError(f"unknown support heads {unknown}; expected among {SUPPORT_HEADS}")
    return [head for head in heads if head == "three_way" or isinstance(scorer, AlignerScorer)]

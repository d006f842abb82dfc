"""Which head of a trained aligner reads support: the 3-way head (AlignScore's P(aligned), the aligner's own
`support`) or the binary head (aligned / not; trained on every pair with a binary or a 3-way label, the 3-way
ones read as aligned or not: factlab.train.aligner.row_targets; its class 1 is aligned).

A method that reads another head wraps the loaded scorer (`with_support_head`); the aligner module itself
is untouched, so that the training and every other scorer do not depend on this choice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from factlab.errors import ConfigError
from factlab.models.protocols import ALIGNED, PairScorer, reads_aligner_heads, runs_on_arrays
from factlab.models.token_memo import on_host

if TYPE_CHECKING:
    from factlab.models.aligner import AlignerScorer
    from factlab.models.token_memo import TokenMemo

SUPPORT_HEADS = ("three_way", "binary")
BINARY_ALIGNED = 1


class SharedForward:
    """A trained aligner read through several heads with one forward per batch.

    The tuning reads every head on the same pairs; the engine then forms the same batches for each head (the
    same pairs in the same order against parallel caches), so the first head's forward keeps the other heads'
    supports of that batch until they are read. A batch not seen before is simply run: the memo saves time and
    never changes a value.

    With a `memo` (factlab.models.token_memo), every forward's other outputs (the token and type heads) are kept
    for a token pass over the same pairs, which then needs no forward of its own.
    """

    def __init__(self, aligner: AlignerScorer, heads: Sequence[str], memo: TokenMemo | None = None) -> None:
        self.aligner = aligner
        self.heads = tuple(heads)
        self.memo = memo
        self._pending: dict[str, dict[str, Any]] = {}

    def view(self, head: str) -> PairScorer:
        return HeadView(self, head)

    def support(self, head: str, ids: Any, mask: Any, types: Any | None) -> Any:
        # one head keeps nothing for later, so its batches need no key (hashing would copy a CUDA batch to the host)
        key = _batch_key(ids, mask, types) if len(self.heads) > 1 else ""
        waiting = self._pending.get(key)
        if waiting is not None and head in waiting:
            value = waiting.pop(head)
            if not waiting:
                del self._pending[key]
            return value
        supports = self.read(ids, mask, types)
        others = {other: supports[other] for other in self.heads if other != head}
        if others:
            self._pending[key] = others
        return supports[head]

    def read(self, ids: Any, mask: Any, types: Any | None) -> dict[str, Any]:
        """Every support head's reading of one batch (one forward), kept in the memo with the token and type heads'."""
        if runs_on_arrays(self.aligner):  # a compiled aligner reads its heads itself (factlab.models.openvino_aligner)
            readings = self.aligner.readings(ids, mask, types)  # type: ignore[attr-defined]
            if self.memo is not None:
                three_way, unsupported, error_types = (readings.get(name) for name in ("three_way", "unsupported", "error_type"))
                self.memo.record_readings(ids, mask, types, three_way, unsupported, error_types)
            return {"three_way": readings["three_way"][:, ALIGNED], "binary": readings["binary"][:, BINARY_ALIGNED]}
        import torch

        logits = self.aligner.network(ids, mask, types if self.aligner.token_types else None)
        if self.memo is not None:
            self.memo.record(ids, mask, types, logits)
        return {  # the 3-way reading is AlignerScorer.support's
            "three_way": torch.softmax(logits["three_way"].float(), dim=-1)[:, ALIGNED],
            "binary": torch.softmax(logits["binary"].float(), dim=-1)[:, BINARY_ALIGNED],
        }


class HeadView:
    """One head of a `SharedForward` as a `PairScorer` with that head's cache identity."""

    def __init__(self, shared: SharedForward, head: str) -> None:
        aligner = shared.aligner
        self.shared = shared
        self.head = head
        self.tokenizer: Any = aligner.tokenizer
        self.max_length = aligner.max_length
        self.device = aligner.device
        self.runtime = aligner.runtime
        self.max_batch_tokens = getattr(aligner, "max_batch_tokens", None)  # engine.batch_token_budget
        self.identity = aligner.identity if head == "three_way" else f"{aligner.identity}:{head}"

    def support(self, input_ids: Any, attention_mask: Any, token_type_ids: Any | None) -> Any:
        return self.shared.support(self.head, input_ids, attention_mask, token_type_ids)

    def inference(self, precision: str) -> Any:
        return self.shared.aligner.inference(precision)  # type: ignore[attr-defined]  # a compiled runtime's (engine.run_context)


def _batch_key(ids: Any, mask: Any, types: Any | None) -> str:
    digest = hashlib.sha1()
    for tensor in (ids, mask, types):
        digest.update(b"none" if tensor is None else repr(tuple(tensor.shape)).encode() + on_host(tensor).tobytes())
    return digest.hexdigest()


def head_readers(scorer: PairScorer, heads: Sequence[str]) -> dict[str, PairScorer]:
    """`scorer` read through each of `heads` (readable_heads'), a trained aligner's heads sharing its forwards."""
    if reads_aligner_heads(scorer) and len(heads) > 1:
        shared = SharedForward(scorer, heads)  # type: ignore[arg-type]
        return {head: shared.view(head) for head in heads}
    return {head: with_support_head(scorer, head) for head in heads}


def with_support_head(scorer: PairScorer, head: str) -> PairScorer:
    """`scorer` read through `head` (SUPPORT_HEADS): itself for three_way or a view of that head; binary needs a
    trained aligner."""
    if head not in SUPPORT_HEADS:
        raise ConfigError(f"unknown support head {head!r}; expected one of {SUPPORT_HEADS}")
    if isinstance(scorer, HeadView):
        return scorer if scorer.head == head else scorer.shared.view(head)
    if head == "three_way":
        return scorer
    if not reads_aligner_heads(scorer):
        raise ConfigError(f"support head {head!r} needs a trained aligner; the model is {scorer.identity} (use three_way)")
    return SharedForward(scorer, (head,)).view(head)  # type: ignore[arg-type]


def readable_heads(scorer: PairScorer, heads: Sequence[str]) -> list[str]:
    """Those of `heads` that `scorer` can be read through: a hub or checkpoint model has one reading (three_way)."""
    unknown = sorted(set(heads) - set(SUPPORT_HEADS))
    if unknown:
        raise ConfigError(f"unknown support heads {unknown}; expected among {SUPPORT_HEADS}")
    return [head for head in heads if head == "three_way" or reads_aligner_heads(scorer)]

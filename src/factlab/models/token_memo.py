"""One forward per pair for a score that also localises: the token head read in the support pass's forwards.

AlignScore's localising score (factlab.score.alignscore) reads every (chunk, sentence) pair twice: for its
support (the engine, through a support head) and for each hypothesis piece's P(unsupported)
(factlab.models.token_support). Both read the same network on the same encoded pairs, so the support pass
runs through a `SharedForward` (factlab.models.support_heads) that keeps, per encoded row, every head's
output (`TokenMemo`); `RememberedAligner` then answers the token pass's batches from the memo, running the
network only for a batch with a row the support pass did not run (a pair its cache already held).

A row is keyed by its unpadded ids and token types: the same encoded pair gives the same key in any batch,
and the engine's masked padding leaves a row's outputs as they are in a batch of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from factlab.models.protocols import runs_on_arrays

if TYPE_CHECKING:
    import torch

    from factlab.models.aligner import AlignerScorer


@dataclass
class RowReading:
    three_way: np.ndarray  # the 3-way head's distribution
    unsupported: np.ndarray  # P(unsupported) of every cell of the row, unpadded
    error_types: np.ndarray | None  # the type head's distribution (None without it)


def on_host(values: Any) -> np.ndarray:
    """A batch's ids, mask or token types as a numpy array (a torch tensor is copied back; an array stays)."""
    return values if isinstance(values, np.ndarray) else values.cpu().numpy()


def row_keys(ids: Any, lengths: list[int], types: Any | None) -> list[bytes]:
    """Each row's key: its first `lengths[row]` ids and token types (the unpadded row)."""
    ids_host = on_host(ids)
    types_host = on_host(types) if types is not None else None
    return [
        ids_host[row, :length].tobytes() + (types_host[row, :length].tobytes() if types_host is not None else b"")
        for row, length in enumerate(lengths)
    ]


class TokenMemo:
    """What the aligner's heads said about each encoded row it ran, keyed by the row's content."""

    def __init__(self) -> None:
        self.rows: dict[bytes, RowReading] = {}

    def record(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor | None, logits: dict[str, torch.Tensor]) -> None:
        """Keep a torch aligner's batch: its heads' logits read as the aligner reads them."""
        import torch

        from factlab.models.aligner import token_probabilities

        three_way = torch.softmax(logits["three_way"].float(), dim=-1).cpu().numpy()
        unsupported = token_probabilities(logits["unsupported"]).cpu().numpy()
        error_types = torch.softmax(logits["error_type"].float(), dim=-1).cpu().numpy() if "error_type" in logits else None
        self.record_readings(ids, mask, types, three_way, unsupported, error_types)

    def record_readings(
        self,
        ids: Any,
        mask: Any,
        types: Any | None,
        three_way: np.ndarray,
        unsupported: np.ndarray,
        error_types: np.ndarray | None,
    ) -> None:
        """Keep a batch's readings: 3-way distributions, every cell's P(unsupported), type distributions (or None)."""
        lengths = on_host(mask).sum(axis=1).tolist()
        for row, key in enumerate(row_keys(ids, lengths, types)):
            self.rows[key] = RowReading(
                three_way[row].copy(),
                unsupported[row, : lengths[row]].copy(),
                error_types[row].copy() if error_types is not None else None,
            )

    def lookup(self, ids: Any, mask: Any, types: Any | None) -> list[RowReading] | None:
        """The batch's rows, or None when any of them was not run."""
        found = [self.rows.get(key) for key in row_keys(ids, on_host(mask).sum(axis=1).tolist(), types)]
        return None if any(reading is None for reading in found) else found  # type: ignore[return-value]


class RememberedAligner:
    """The aligner as factlab.models.token_support.score_tokens reads it, answering from `memo` where it can."""

    def __init__(self, aligner: AlignerScorer, memo: TokenMemo) -> None:
        self.aligner = aligner
        self.memo = memo
        self.tokenizer = aligner.tokenizer
        self.max_length = aligner.max_length
        self.device = aligner.device
        self.identity = aligner.identity
        self.has_type_head = aligner.has_type_head
        self.runtime = aligner.runtime
        self.max_batch_tokens = getattr(aligner, "max_batch_tokens", None)  # engine.batch_token_budget

    def inference(self, precision: str) -> Any:
        return self.aligner.inference(precision)  # type: ignore[attr-defined]  # a compiled runtime's (engine.run_context)

    def sequence_and_tokens(self, input_ids: Any, attention_mask: Any, token_type_ids: Any | None) -> tuple[Any, Any, Any | None]:
        readings = self.memo.lookup(input_ids, attention_mask, token_type_ids)
        if readings is None:
            return self.aligner.sequence_and_tokens(input_ids, attention_mask, token_type_ids)
        unsupported = np.zeros(tuple(input_ids.shape), dtype=np.float32)
        for row, reading in enumerate(readings):
            unsupported[row, : len(reading.unsupported)] = reading.unsupported
        types = [reading.error_types for reading in readings]
        answers = (
            np.stack([reading.three_way for reading in readings]),
            unsupported,
            np.stack(types) if all(t is not None for t in types) else None,  # type: ignore[arg-type]
        )
        if runs_on_arrays(self.aligner):
            return answers
        import torch

        return tuple(None if answer is None else torch.from_numpy(answer) for answer in answers)  # type: ignore[return-value]

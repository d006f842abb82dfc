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

import numpy as np
import torch

from factlab.models.aligner import AlignerScorer, token_probabilities


@dataclass
class RowReading:
    three_way: np.ndarray  # the 3-way head's distribution
    unsupported: np.ndarray  # P(unsupported) of every cell of the row, unpadded
    error_types: np.ndarray | None  # the type head's distribution (None without it)


def row_keys(ids: torch.Tensor, lengths: list[int], types: torch.Tensor | None) -> list[bytes]:
    """Each row's key: its first `lengths[row]` ids and token types (the unpadded row)."""
    ids_host = ids.cpu().numpy()
    types_host = types.cpu().numpy() if types is not None else None
    return [
        ids_host[row, :length].tobytes() + (types_host[row, :length].tobytes() if types_host is not None else b"")
        for row, length in enumerate(lengths)
    ]


class TokenMemo:
    """What the aligner's heads said about each encoded row it ran, keyed by the row's content."""

    def __init__(self) -> None:
        self.rows: dict[bytes, RowReading] = {}

    def record(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor | None, logits: dict[str, torch.Tensor]) -> None:
        three_way = torch.softmax(logits["three_way"].float(), dim=-1).cpu().numpy()
        unsupported = token_probabilities(logits["unsupported"]).cpu().numpy()
        error_types = torch.softmax(logits["error_type"].float(), dim=-1).cpu().numpy() if "error_type" in logits else None
        lengths = mask.sum(dim=1).tolist()
        for row, key in enumerate(row_keys(ids, lengths, types)):
            self.rows[key] = RowReading(
                three_way[row].copy(),
                unsupported[row, : lengths[row]].copy(),
                error_types[row].copy() if error_types is not None else None,
            )

    def lookup(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor | None) -> list[RowReading] | None:
        """The batch's rows, or None when any of them was not run."""
        found = [self.rows.get(key) for key in row_keys(ids, mask.sum(dim=1).tolist(), types)]
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

    def sequence_and_tokens(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        readings = self.memo.lookup(input_ids, attention_mask, token_type_ids)
        if readings is None:
            return self.aligner.sequence_and_tokens(input_ids, attention_mask, token_type_ids)
        unsupported = np.zeros(tuple(input_ids.shape), dtype=np.float32)
        for row, reading in enumerate(readings):
            unsupported[row, : len(reading.unsupported)] = reading.unsupported
        types = [reading.error_types for reading in readings]
        return (
            torch.from_numpy(np.stack([reading.three_way for reading in readings])),
            torch.from_numpy(unsupported),
            torch.from_numpy(np.stack(types)) if all(t is not None for t in types) else None,  # type: ignore[arg-type]
        )

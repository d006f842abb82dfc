"""SCALE's evidence retrieval on WiCE claims: binary search against brute force, recall@k and model calls.

A claim (`output`) is searched for in its cited page: the WiCE evidence sentences, whose spans in
`source` are `evidence_offsets` (factlab.data.adapters.wice), so retrieved indices are WiCE's.
WiCE annotates alternative sets of supporting sentences (`supporting_sentences`); claims whose sets
are all empty (not supported) have nothing to retrieve and are left out, counted.

Per claim and k: binary search @k = the search stopped as soon as at most k sentences are left
(so it may return fewer than k: 5 sentences in groups 2 + 2 + 1 can end on 1), with the calls it
took to get there; brute force @k = the k best sentences scored alone (n calls, whatever k); best
chunk @k = the k best sentences, scored alone, inside the best-scoring AlignScore chunk of the page
(the evidence the AlignScore scorer and `factlab check` report: factlab.score.alignscore), with the
chunk size the AlignScore tuning chose (chunks + that chunk's sentences calls).
- recall@k = max over the alternative sets S of |retrieved ∩ S| / |S| (how much of one complete
  set of evidence was found);
- hit@k = 1 if a retrieved sentence is in any set (SCALE's ScreenEval measure: the retrieved
  utterance is among the relevant ones).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from factlab.errors import DataError
from factlab.score.scale import (
    PairScores,
    Premises,
    RetrievalSettings,
    SearchTask,
    at_most,
    binary_search,
    brute_force,
    top_k,
)
from factlab.text.chunking import AlignScorePolicy, alignscore_chunks
from factlab.text.sentences import Sentence

COLUMNS = ("example_id", "split", "source", "output", "wice_label", "supporting_sentences", "evidence_offsets")
METHODS = ("binary_search", "brute_force", "best_chunk")


@dataclass(frozen=True)
class Claim:
    example_id: str
    wice_label: str
    task: SearchTask
    supporting: tuple[tuple[int, ...], ...]  # the non-empty alternative sets of evidence indices
    split: str  # WiCE's split (dev, test): summarised apart


def read_claims(frame: pd.DataFrame, path: str, settings: RetrievalSettings) -> tuple[list[Claim], dict[str, int]]:
    """The claims of `settings.splits` with annotated support, by example_id (the first `max_claims` if set)."""
    for column in COLUMNS:
        if column not in frame.columns:
            raise DataError("column missing", file=path, field=column)
    rows = frame[frame["split"].isin(settings.splits)].sort_values("example_id", kind="stable")
    claims: list[Claim] = []
    without_support = 0
    for row in rows.itertuples(index=False):
        where = {"file": path, "record": str(row.example_id)}
        spans = _offsets(row.evidence_offsets, row.source, where)
        sets = _supporting(row.supporting_sentences, len(spans), where)
        if not sets:
            without_support += 1
            continue
        if not isinstance(row.output, str) or not row.output.strip():
            raise DataError("not a non-empty string", **where, field="output")
        task = SearchTask(row.source, spans, row.output)
        claims.append(Claim(str(row.example_id), str(row.wice_label), task, sets, str(row.split)))
    counts = {"claims_in_splits": len(rows), "claims_without_support": without_support, "claims_with_support": len(claims)}
    if settings.max_claims:
        claims = claims[: settings.max_claims]
    counts["claims_evaluated"] = len(claims)
    return claims, counts


def _json(text: Any, where: dict[str, str], field: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, json.JSONDecodeError) as error:
        raise DataError(f"not JSON ({error})", **where, field=field) from error


def _offsets(text: Any, source: Any, where: dict[str, str]) -> list[tuple[int, int]]:
    """[start, end) of each evidence sentence: integers, in order, inside the source."""
    value = _json(text, where, "evidence_offsets")
    if not isinstance(source, str):
        raise DataError("source is not a string", **where, field="source")
    ok = isinstance(value, list) and value and all(_span(span, len(source)) for span in value)
    if ok:
        ok = all(a[1] <= b[0] for a, b in zip(value[:-1], value[1:], strict=True))
    if not ok:
        raise DataError(
            f"not ordered [start, end) spans inside the source ({len(source)} characters)", **where, field="evidence_offsets"
        )
    return [(int(start), int(end)) for start, end in value]


def _span(span: Any, length: int) -> bool:
    return (
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in span)
        and 0 <= span[0] <= span[1] <= length
    )


def _supporting(text: Any, n_sentences: int, where: dict[str, str]) -> tuple[tuple[int, ...], ...]:
    value = _json(text, where, "supporting_sentences")
    valid = isinstance(value, list) and all(
        isinstance(group, list) and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n_sentences for i in group)
        for group in value
    )
    if not valid:
        raise DataError(f"not lists of evidence indices (0-{n_sentences - 1})", **where, field="supporting_sentences")
    return tuple(tuple(group) for group in value if group)


def recall(retrieved: Sequence[int], supporting: Sequence[Sequence[int]]) -> float:
    """Best share of one alternative set found."""
    found = set(retrieved)
    return max(len(found & set(group)) / len(group) for group in supporting)


def hit(retrieved: Sequence[int], supporting: Sequence[Sequence[int]]) -> bool:
    return bool(set(retrieved) & {i for group in supporting for i in group})


def best_chunks(tasks: Sequence[SearchTask], score: PairScores, chunking: ChunkSettings) -> list[tuple[range, int]]:
    """Each task's best AlignScore chunk of its sentences (their range, and the chunks scored)."""
    found, pairs, owners = [], [], []
    for index, task in enumerate(tasks):
        sentences = [Sentence(task.source[start:end], start, end) for start, end in task.units]
        chunks, _ = alignscore_chunks(sentences, chunking.words_per_chunk, chunking.policy)
        found.append([range(chunk.first, chunk.stop) for chunk in chunks])
        pairs += [(chunk.text, task.hypothesis) for chunk in chunks]
        owners += [index] * len(chunks)
    values = np.asarray(score(pairs), dtype=np.float64) if pairs else np.empty(0)
    best: list[tuple[range, int]] = []
    for index, ranges in enumerate(found):
        mine = values[np.asarray(owners) == index]
        best.append((ranges[int(np.argmax(mine))], len(ranges)))  # first on ties, as AlignScore's max
    return best


@dataclass(frozen=True)
class ChunkSettings:
    words_per_chunk: int
    policy: AlignScorePolicy = "reference"


def evaluate_retrieval(
    claims: Sequence[Claim],
    score: PairScores,
    settings: RetrievalSettings,
    premises: Premises,
    chunking: ChunkSettings | None = None,
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """One row per (claim, method, k), and the summary per (split, method, k); `best_chunk` only with `chunking`."""
    tasks = [claim.task for claim in claims]
    paths = binary_search(tasks, score, settings.branches, settings.split, premises)
    alone = brute_force(tasks, score)
    chunked = best_chunks(tasks, score, chunking) if chunking is not None else [None] * len(tasks)
    rows = []
    for claim, path, scores, chunk in zip(claims, paths, alone, chunked, strict=True):
        for k in settings.ks:
            step = at_most(path, k)
            found = {"binary_search": (list(range(step.first, step.stop)), step.calls, step.score)}
            best = top_k(scores, k)
            found["brute_force"] = (best, len(scores), float(scores[best[0]]))
            if chunk is not None:
                sentences, n_chunks = chunk
                inside = [sentences[i] for i in top_k(scores[sentences.start : sentences.stop], k)]
                found["best_chunk"] = (inside, n_chunks + len(sentences), float(scores[inside[0]]))
            for method, (retrieved, calls, top_score) in found.items():
                rows.append(
                    {
                        "example_id": claim.example_id,
                        "split": claim.split,
                        "wice_label": claim.wice_label,
                        "n_sentences": len(claim.task.units),
                        "method": method,
                        "k": k,
                        "retrieved": json.dumps(retrieved),
                        "spans": json.dumps([list(claim.task.units[i]) for i in retrieved]),
                        "score": top_score,
                        "recall": recall(retrieved, claim.supporting),
                        "hit": int(hit(retrieved, claim.supporting)),
                        "calls": calls,
                        "n_retrieved": len(retrieved),
                    }
                )
    table = pd.DataFrame(rows)
    return table, summarise(table)


def summarise(table: pd.DataFrame) -> list[dict[str, Any]]:
    """Mean recall, hit rate, calls and retrieved sentences per (split, method, k)."""
    summary = []
    for (split, method, k), group in table.groupby(["split", "method", "k"], sort=True):
        summary.append(
            {
                "split": split,
                "method": method,
                "k": int(k),
                "claims": len(group),
                "recall": float(group["recall"].mean()),  # recall@k
                "hit": float(group["hit"].mean()),  # hit@k
                "mean_calls": float(group["calls"].mean()),
                "mean_retrieved": float(group["n_retrieved"].mean()),
                "mean_sentences": float(np.mean(group["n_sentences"])),
            }
        )
    return summary

"""SCALE (Lattimer et al., 2023) with factlab's pair scorer: window scores, and evidence retrieval.

Score (`score_scale`). The source is cut into overlapping windows of the scoring model's tokens
(`factlab.text.chunking.token_windows`), every output sentence (from the preprocess stage)
is scored against every window in one engine call; sentence support = max over windows, example
score = mean over sentences (`aggregation: mean`) or min. The detail keeps, per sentence, the best
window and its character span in the source, as AlignScore's does.

Deliberate deviations from SCALE's code (asappresearch/scale-score, `scale_score/utils.py`):
- The model is factlab's pair scorer: by default the aligner's P(aligned) (or an NLI classifier's
  P(entailment)), where SCALE reads Flan-T5's P("Yes") after its prompt; the "prompt" a window
  leaves room for is then the pair's special tokens plus the output sentence. SCALE's own reading
  is one parameter away: a seq2seq model (`score.scale.model: google/flan-t5-large`, or a folder)
  is asked SCALE's question (`factlab.models.yesno`), and its windows leave room for that prompt.
- A document's windows are sized once, for its longest output sentence, so all its sentences share
  them (the engine then deduplicates), as the preprocess stage's chunk report does; SCALE sizes them
  per sentence.
- `chunk_size` may not exceed the model's `max_length`: the engine would cut every window (SCALE
  uses 1000 with Flan-T5; the aligner reads 512 word pieces).

Retrieval (`binary_search`, SCALE's `scale_retrieve`). The source sentences are cut into
consecutive groups, each group (the source text it spans) is scored as the premise of the output
sentence, the best group is kept, until one sentence is left. `split: reference` makes groups of
`n // branches` sentences, so a remainder is a further, smaller group (5 sentences, 2 branches:
2 + 2 + 1), as SCALE's `get_retrieval_chunks`; `even` makes exactly `branches` groups whose sizes
differ by at most one. Ties go to the first group (SCALE's np.argmax). The path is kept: the search
stopped at k sentences is its prefix (`at_most`). `brute_force` scores every sentence alone.
A group is one premise (`whole`, SCALE; the engine cuts it to the model's length, counted) or, with
`windows`, its score is the max over its token windows (one call per window).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from factlab.errors import ConfigError, DataError, FactlabError
from factlab.models.engine import EngineSettings, PairCache, PairTemplate, score_pairs, scorer_template
from factlab.models.protocols import PairScorer
from factlab.score.alignscore import best_premises
from factlab.score.sentences import AGGREGATIONS, aggregate, sentences_by_owner
from factlab.text.chunking import ChunkReport, token_windows
from factlab.text.sentences import Sentence

WINDOW_POLICIES = ("covering", "reference")
SPLITS = ("reference", "even")
GROUP_PREMISES = ("whole", "windows")
PairScores = Callable[[Sequence[tuple[str, str]]], np.ndarray]  # supports of (premise, hypothesis) pairs, in order
Premises = Callable[[str, str], list[str]]  # (group text, hypothesis) -> the premises that score the group
S = TypeVar("S")


def from_mapping(cls: type[S], values: Mapping[str, Any], what: str) -> S:
    """A settings dataclass from params.yaml: every key required (the defaults live in params.yaml only)."""
    known = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    unknown, missing = sorted(set(values) - set(known)), [name for name in known if name not in values]
    if unknown or missing:
        raise ConfigError(f"{what}: unknown settings {unknown}, missing settings {missing}; expected {known}")
    return cls(**values)


@dataclass(frozen=True)
class RetrievalSettings:
    branches: int  # groups per level (SCALE: 2)
    split: str  # reference | even
    group_premise: str  # whole | windows
    ks: tuple[int, ...]  # recall@k reported
    splits: tuple[str, ...]  # WiCE splits evaluated
    max_claims: int  # 0 = every claim with annotated support; N = the first N by example_id

    def __post_init__(self) -> None:
        object.__setattr__(self, "ks", tuple(self.ks))
        object.__setattr__(self, "splits", tuple(self.splits))
        if self.branches < 2:
            raise ConfigError(f"score.scale.retrieval.branches must be >= 2, got {self.branches}")
        if self.split not in SPLITS or self.group_premise not in GROUP_PREMISES:
            raise ConfigError(
                f"score.scale.retrieval: split {self.split!r} must be one of {SPLITS}, "
                f"group_premise {self.group_premise!r} one of {GROUP_PREMISES}"
            )
        if not self.ks or min(self.ks) < 1 or not self.splits or self.max_claims < 0:
            raise ConfigError("score.scale.retrieval: ks must be positive, splits non-empty, max_claims >= 0")


@dataclass(frozen=True)
class ScaleSettings:
    chunk_size: int  # model tokens per pair: window + output sentence + special tokens
    overlap: float  # share of a window repeated by the next (SCALE: 0.25)
    window_policy: str  # covering | reference (factlab.text.chunking.token_windows)
    aggregation: str  # mean | min over output sentences
    retrieval: RetrievalSettings

    def __post_init__(self) -> None:
        if isinstance(self.retrieval, Mapping):
            object.__setattr__(self, "retrieval", from_mapping(RetrievalSettings, self.retrieval, "score.scale.retrieval"))
        if self.aggregation not in AGGREGATIONS or self.window_policy not in WINDOW_POLICIES:
            raise ConfigError(
                f"score.scale: aggregation {self.aggregation!r} must be one of {AGGREGATIONS}, "
                f"window_policy {self.window_policy!r} one of {WINDOW_POLICIES}"
            )
        if self.chunk_size < 2 or not 0 <= self.overlap < 1:
            raise ConfigError(f"score.scale: chunk_size {self.chunk_size} must be >= 2, overlap {self.overlap} in [0, 1)")


@dataclass(frozen=True)
class Window:
    text: str  # source[start:end]
    start: int  # characters in the source
    end: int
    token_start: int  # model tokens of the source
    token_end: int


def special_tokens(template: PairTemplate) -> int:
    """Tokens a scorer's template adds around a pair (special tokens, or a yes/no model's prompt)."""
    return len(template.prefix) + len(template.middle) + len(template.suffix)


def hypothesis_tokens(tokenizer: Any, template: PairTemplate, texts: Sequence[str]) -> list[int]:
    """Model tokens of each text as the template reads a hypothesis (inside its prompt, for a yes/no model)."""
    texts = [template.hypothesis_text(text) for text in texts]
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]] if texts else []


def source_windows(tokenizer: Any, source: str, prompt_tokens: int, settings: ScaleSettings) -> tuple[list[Window], ChunkReport]:
    """SCALE windows of `source` leaving `prompt_tokens` of `chunk_size` for the rest of the pair."""
    encoded = tokenizer(source, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    spans, report = token_windows(
        encoded["input_ids"],
        settings.chunk_size,
        prompt_tokens,
        settings.overlap,
        settings.window_policy,  # type: ignore[arg-type]
    )
    offsets = encoded["offset_mapping"]
    windows = []
    for span in spans:
        start, end = (offsets[span.start][0], offsets[span.end - 1][1]) if span.end > span.start else (0, 0)
        windows.append(Window(source[start:end], start, end, span.start, span.end))
    return windows, report


@dataclass
class ScalePairs:
    outputs: dict[str, list[Sentence]]  # example_id -> output sentences
    windows: dict[str, list[Window]]  # doc_id -> source windows
    pairs: list[tuple[str, str]]  # (window, sentence) for every sentence of every example and every window of its source
    owners: list[tuple[int, int, int]]  # (example row, sentence index, window index) of each pair
    report: ChunkReport


def scale_pairs(examples: pd.DataFrame, sentences: pd.DataFrame, scorer: PairScorer, settings: ScaleSettings) -> ScalePairs:
    """Every (window, output sentence) pair SCALE scores for `examples` (`example_id`, `doc_id`, `source`)."""
    if settings.chunk_size > scorer.max_length:
        raise ConfigError(
            f"score.scale.chunk_size {settings.chunk_size} exceeds the model's max_length {scorer.max_length}: "
            "every window would be cut"
        )
    if "source" not in examples.columns:
        raise DataError("the examples have no source text", field="source")
    outputs = sentences_by_owner(sentences, "output", "example_id")
    ids = list(zip(examples["example_id"].astype(str), examples["doc_id"].astype(str), examples["source"], strict=True))
    template = scorer_template(scorer)
    special = special_tokens(template)
    longest: dict[str, tuple[int, str]] = {}  # doc_id -> (prompt tokens, example of the longest sentence)
    sources: dict[str, str] = {}
    for example_id, doc_id, source in ids:
        if not isinstance(source, str):
            raise DataError("source is not a string", record=example_id, field="source")
        sources.setdefault(doc_id, source)
        texts = [s.text for s in outputs.get(example_id, [])]
        length = special + max(hypothesis_tokens(scorer.tokenizer, template, texts), default=0)
        longest[doc_id] = max(longest.get(doc_id, (0, "")), (length, example_id))
    windows: dict[str, list[Window]] = {}
    report = ChunkReport()
    for doc_id, (prompt, example_id) in longest.items():
        if prompt >= settings.chunk_size:
            raise DataError(
                f"an output sentence takes {prompt} model tokens with the special tokens, leaving no room for the "
                f"source in score.scale.chunk_size={settings.chunk_size}",
                record=example_id,
                field="output",
            )
        windows[doc_id], doc_report = source_windows(scorer.tokenizer, sources[doc_id], prompt, settings)
        report += doc_report
    job = ScalePairs(outputs, windows, [], [], report)
    for row, (example_id, doc_id, _) in enumerate(ids):
        for sentence_index, sentence in enumerate(outputs.get(example_id, [])):
            for window_index, window in enumerate(windows[doc_id]):
                job.pairs.append((window.text, sentence.text))
                job.owners.append((row, sentence_index, window_index))
    return job


def score_scale(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    scorer: PairScorer,
    settings: ScaleSettings,
    engine: EngineSettings | None = None,
    cache: PairCache | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """SCALE of every example (`example_id`, `doc_id`, `source`): max over windows, mean (or min) over sentences."""
    job = scale_pairs(examples, sentences, scorer, settings)
    result = score_pairs(scorer, job.pairs, engine, cache, description="scale pairs")
    best = best_premises(job.owners, result.scores, result.premise_cut)  # (row, sentence) -> (support, window, cut)
    records = []
    for row, (example_id, doc_id) in enumerate(
        zip(examples["example_id"].astype(str), examples["doc_id"].astype(str), strict=True)
    ):
        detail = []
        for sentence_index, sentence in enumerate(job.outputs.get(example_id, [])):
            support, window_index, cut = best[(row, sentence_index)]
            window = job.windows[doc_id][window_index]
            detail.append(
                {
                    "sentence_index": sentence_index,
                    "sentence": sentence.text,
                    "start": sentence.start,
                    "end": sentence.end,
                    "support": support,
                    "best_chunk": window_index,
                    "chunk_start": window.start,
                    "chunk_end": window.end,
                    "premise_pieces_cut": cut,
                }
            )
        score = aggregate([item["support"] for item in detail], settings.aggregation)
        records.append(
            {
                "example_id": example_id,
                "score": score,
                "n_sentences": len(detail),
                "n_chunks": len(job.windows[doc_id]),
                "sentences": detail,
            }
        )
    counts = {
        **result.counts,
        "examples": len(records),
        "examples_without_output_sentences": sum(not record["sentences"] for record in records),
        "documents": len(job.windows),
        "source_windows": job.report.n_chunks,
        "redundant_windows": job.report.n_redundant,
        "empty_sources": job.report.n_empty_inputs,
    }
    return pd.DataFrame.from_records(records), counts


# --- retrieval -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchTask:
    """One output sentence and the source sentences (character spans in `source`, in order) to search."""

    source: str
    units: Sequence[tuple[int, int]]
    hypothesis: str

    def text(self, first: int, stop: int) -> str:
        """Sentences `first:stop` as the source spans them (WiCE: joined by one space, as SCALE joins them)."""
        return self.source[self.units[first][0] : self.units[stop - 1][1]]


@dataclass(frozen=True)
class SearchStep:
    first: int  # the candidate sentences after this step: first:stop
    stop: int
    calls: int  # model calls (premise, hypothesis pairs) so far
    score: float  # the kept group's score (NaN before any call)


def split_groups(first: int, stop: int, branches: int, split: str) -> list[tuple[int, int]]:
    """The consecutive groups one level of the search scores."""
    n = stop - first
    if split == "reference":  # SCALE's get_retrieval_chunks: groups of n // branches, the remainder apart
        size = max(n // branches, 1)
        return [(start, min(start + size, stop)) for start in range(first, stop, size)]
    parts = min(branches, n)
    bounds = [first + j * n // parts for j in range(parts + 1)]  # sizes differ by at most one
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def whole_premise(text: str, hypothesis: str) -> list[str]:
    return [text]


def window_premises(scorer: PairScorer, settings: ScaleSettings) -> Premises:
    """A group scored as SCALE scores a source: its windows, sized for the hypothesis."""
    tokenizer, template = scorer.tokenizer, scorer_template(scorer)
    special = special_tokens(template)

    def premises(text: str, hypothesis: str) -> list[str]:
        prompt = special + hypothesis_tokens(tokenizer, template, [hypothesis])[0]
        return [window.text for window in source_windows(tokenizer, text, prompt, settings)[0]]

    return premises


def binary_search(
    tasks: Sequence[SearchTask], score: PairScores, branches: int, split: str, premises: Premises = whole_premise
) -> list[list[SearchStep]]:
    """Each task's search path down to one sentence; every level of every task goes to `score` at once."""
    if any(not task.units for task in tasks):
        raise FactlabError("a search task has no source sentences")
    paths = [[SearchStep(0, len(task.units), 0, math.nan)] for task in tasks]
    active = [i for i, task in enumerate(tasks) if len(task.units) > 1]
    while active:
        groups = {i: split_groups(paths[i][-1].first, paths[i][-1].stop, branches, split) for i in active}
        pairs, owners = [], []
        for i in active:
            for g, (first, stop) in enumerate(groups[i]):
                for premise in premises(tasks[i].text(first, stop), tasks[i].hypothesis):
                    pairs.append((premise, tasks[i].hypothesis))
                    owners.append((i, g))
        values = np.asarray(score(pairs), dtype=np.float64)
        best = {i: np.full(len(groups[i]), -np.inf) for i in active}
        calls = dict.fromkeys(active, 0)
        for (i, g), value in zip(owners, values, strict=True):
            best[i][g] = max(best[i][g], value)
            calls[i] += 1
        for i in active:
            g = int(np.argmax(best[i]))
            first, stop = groups[i][g]
            paths[i].append(SearchStep(first, stop, paths[i][-1].calls + calls[i], float(best[i][g])))
        active = [i for i in active if paths[i][-1].stop - paths[i][-1].first > 1]
    return paths


def at_most(path: Sequence[SearchStep], k: int) -> SearchStep:
    """The search stopped as soon as at most `k` sentences are left: the first such step of the path."""
    return next(step for step in path if step.stop - step.first <= k)


def brute_force(tasks: Sequence[SearchTask], score: PairScores) -> list[np.ndarray]:
    """Every source sentence alone against the hypothesis: one score per sentence, one call each."""
    pairs = [(task.text(i, i + 1), task.hypothesis) for task in tasks for i in range(len(task.units))]
    values = np.asarray(score(pairs), dtype=np.float64)
    bounds = np.cumsum([0] + [len(task.units) for task in tasks])
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k highest scores, ties to the earlier sentence."""
    return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


class EngineScores:
    """`PairScores` through the engine, adding up its counts over calls (the search calls once per level)."""

    def __init__(self, scorer: PairScorer, engine: EngineSettings | None = None, description: str = "scale pairs") -> None:
        self.scorer, self.engine, self.description = scorer, engine, description
        self.cache = PairCache()
        self.counts: dict[str, int] = {}

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        result = score_pairs(self.scorer, pairs, self.engine, self.cache, self.description)
        for key, value in result.counts.items():
            self.counts[key] = self.counts.get(key, 0) + value
        return result.scores

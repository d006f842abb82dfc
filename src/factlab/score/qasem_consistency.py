"""QASemConsistency (Cattan et al., 2024) over a preprocessed benchmark.

The output is decomposed into QA-SRL / QANom question-answer pairs; each QA becomes the hypothesis
`question + " " + answer` (methods.md, QASemConsistency; the same string the
`qasem_consistency_qas` benchmark stores as `output`) and is scored against the source with the
engine (`score_pairs`): the source is cut into AlignScore chunks (`alignscore_chunks`, as
score/alignscore.py) and a QA's score is the max over chunks of the support. The output score
aggregates its QAs (`aggregation`):

- `share`: the share of supported QAs, a QA supported iff its score >= `threshold` (the paper's
  output-level score; the paper's threshold is 0.5, untuned);
- `min`: the lowest QA score (one unsupported QA is enough);
- `mean`: the mean QA score.

QA sources (`qa_source`):

- `parser`: the QAs of the preprocess stage (results/preprocess/<benchmark>/qas.parquet, any
  QASem parser, every benchmark); a QA's sentence is its `sentence_index` in sentences.parquet.
- `gold`: the benchmark's annotated QAs (`qasem_consistency_qas`: one row per QA, `doc_id` = the
  response's example_id). A QA's sentence is the preprocess output sentence holding its predicate
  (`predicate_idx` is a token offset into the response, whose tokens are joined by single spaces).

`decomposition: sentences` scores each output sentence as the hypothesis instead, with the same
chunks and aggregation, so the value of the QA decomposition can be measured against it (with
`aggregation: mean` it is AlignScore's mean over sentences).

An output with no QAs (the parser found no predicate, or no gold QA for it) is scored by its
sentences (the `sentences` decomposition, same aggregation and threshold): its row says
`decomposition: sentences`, and the report counts it (`examples_without_qas`). The fallback keeps
every example in the meta-evaluation (a NaN would drop it, so that scorers would be compared on
different examples) and is the model's own judgement of that text. An output without sentences
either scores NaN (`examples_without_output_sentences`). Output sentences without QAs in an output
that has QAs are not scored (the paper's score covers QAs only) and are counted
(`output_sentences_without_qas`).

The score table has `example_id, score` and the detail that localises (`units`): per hypothesis
its kind (`qa` or `sentence`), the QA id, question and answer, the output sentence it belongs to,
its character spans in the output (`output_spans`: a parser QA's predicate and answer, a sentence's own
span; a gold QA's are not given, `[]`), its score and whether it is supported, the best chunk and that
chunk's character span in the source.
"""

from __future__ import annotations

import bisect
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from factlab.errors import ConfigError, DataError
from factlab.models.engine import EngineSettings, PairCache, score_pairs
from factlab.models.protocols import PairScorer
from factlab.models.support_heads import SUPPORT_HEADS, with_support_head
from factlab.score.alignscore import best_premises
from factlab.score.sentences import sentences_by_owner
from factlab.text.chunking import CHUNK_POLICIES, AlignScorePolicy, SentenceChunk, alignscore_chunks
from factlab.text.sentences import Sentence

LOG = logging.getLogger(__name__)
DECOMPOSITIONS = ("qas", "sentences")
QA_SOURCES = ("parser", "gold")
AGGREGATIONS = ("share", "min", "mean")
CLASS_PRIORS = ("trained", "balanced")
QA, SENTENCE = "qa", "sentence"
PARSER_COLUMNS = ("example_id", "sentence_index", "predicate_index", "question", "answer")
PARSER_SPAN_COLUMNS = ("predicate_char_start", "predicate_char_end", "answer_char_start", "answer_char_end")
GOLD_COLUMNS = ("example_id", "doc_id", "predicate_idx", "question", "answer", "response")


@dataclass(frozen=True)
class QASemConsistencySettings:
    """score.qasem_consistency of params.yaml, with AlignScore's chunking (its tuned choice and policy)."""

    decomposition: str  # qas | sentences
    qa_source: str  # parser | gold (read only when decomposition is qas)
    aggregation: str  # share | min | mean
    threshold: float  # a hypothesis is supported iff its score >= threshold
    support_head: str  # the trained aligner's head that reads support (factlab.models.support_heads)
    class_prior: str  # trained | balanced (balanced_support, with aligned_share)
    words_per_chunk: int
    chunk_policy: AlignScorePolicy
    aligned_share: float | None = None  # the training labels' aligned share; required by class_prior balanced

    def __post_init__(self) -> None:
        for name, value, known in (
            ("decomposition", self.decomposition, DECOMPOSITIONS),
            ("qa_source", self.qa_source, QA_SOURCES),
            ("aggregation", self.aggregation, AGGREGATIONS),
            ("chunk_policy", self.chunk_policy, CHUNK_POLICIES),
            ("support_head", self.support_head, SUPPORT_HEADS),
            ("class_prior", self.class_prior, CLASS_PRIORS),
        ):
            if value not in known:
                raise ConfigError(f"unknown qasem_consistency {name} {value!r}; expected one of {known}")
        if self.class_prior == "balanced" and self.aligned_share is None:
            raise ConfigError("qasem_consistency class_prior 'balanced' needs the training labels' aligned share")
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, int | float) or not 0 <= self.threshold <= 1:
            raise ConfigError(f"qasem_consistency threshold must be a number in [0, 1], got {self.threshold!r}")
        if isinstance(self.words_per_chunk, bool) or not isinstance(self.words_per_chunk, int) or self.words_per_chunk < 1:
            raise ConfigError(f"qasem_consistency words_per_chunk must be a positive integer, got {self.words_per_chunk!r}")


@dataclass(frozen=True)
class Hypothesis:
    """One unit scored against the source: a QA (`question + " " + answer`) or an output sentence."""

    unit: str  # "qa" | "sentence"
    text: str
    sentence_index: int  # the output sentence (index in sentences.parquet) it belongs to
    qa_id: str | None = None
    question: str | None = None
    answer: str | None = None
    output_spans: tuple[tuple[int, int], ...] = ()  # [start, end) in the output: a QA's predicate and answer


def qa_hypothesis(question: str, answer: str) -> str:
    """The hypothesis of a QA: the question, a space, the answer (QASemConsistency's concatenation)."""
    return f"{question} {answer}"


def aggregate_support(scores: Sequence[float], aggregation: str, threshold: float) -> float:
    """An output's score from its hypotheses' scores: share >= threshold, min or mean; NaN without any."""
    if aggregation not in AGGREGATIONS:
        raise ConfigError(f"unknown qasem_consistency aggregation {aggregation!r}; expected one of {AGGREGATIONS}")
    if len(scores) == 0:
        return float("nan")
    values = np.asarray(scores, dtype=np.float64)
    if aggregation == "share":
        return float(np.mean(values >= threshold))
    return float(values.min() if aggregation == "min" else values.mean())


def balanced_support(support: np.ndarray, aligned_share: float) -> np.ndarray:
    """P(aligned) of a head trained on labels `aligned_share` aligned, read under equal priors: the odds times
    (1 - share) / share, i.e. the logit plus log((1 - share) / share). The Bayes decision for balanced accuracy
    thresholds this at 0.5; the order of the supports (so any AUC) is unchanged."""
    if not 0 < aligned_share < 1:
        raise ConfigError(f"the aligned share of the training labels must be in (0, 1), got {aligned_share!r}")
    support = np.asarray(support, dtype=np.float64)
    aligned, other = support * (1 - aligned_share), (1 - support) * aligned_share
    return aligned / (aligned + other)


# --- QA tables --------------------------------------------------------------------------------


def _require_columns(qas: pd.DataFrame, columns: Sequence[str], file: str | Path, what: str) -> None:
    missing = [column for column in columns if column not in qas.columns]
    if missing:
        raise DataError(f"the {what} QA table lacks the columns {missing}", file=file, field=missing[0])


def _qa_text(value: object, *, file: str | Path, record: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{field} must be a non-empty string, got {value!r}", file=file, record=record, field=field)
    return value


def _index(value: object, *, file: str | Path, record: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise DataError(f"{field} must be a non-negative integer, got {value!r}", file=file, record=record, field=field)
    return int(value)


def parser_hypotheses(
    qas: pd.DataFrame, outputs: Mapping[str, Sequence[Sentence]], example_ids: Sequence[str], file: str | Path
) -> dict[str, list[Hypothesis]]:
    """The parser's QAs (preprocess qas.parquet) of `example_ids`, in sentence and table order.

    A QA's id is `<example_id>/s<sentence>/p<predicate token>/q<n>`, n counting the QAs of that
    predicate in table order; its sentence must be an output sentence of its example.
    """
    _require_columns(qas, PARSER_COLUMNS + PARSER_SPAN_COLUMNS, file, "parser")
    wanted = set(example_ids)
    rows = qas[qas["example_id"].isin(wanted)]
    found: dict[str, list[Hypothesis]] = {}
    seen: dict[tuple[str, int, int], int] = {}
    columns = PARSER_COLUMNS + PARSER_SPAN_COLUMNS
    for example_id, sentence, predicate, question, answer, *offsets in zip(*(rows[c] for c in columns), strict=True):
        example_id = str(example_id)
        record = f"example {example_id} sentence {sentence} predicate {predicate}"
        sentence_index = _index(sentence, file=file, record=record, field="sentence_index")
        predicate_index = _index(predicate, file=file, record=record, field="predicate_index")
        n_sentences = len(outputs.get(example_id, ()))
        if sentence_index >= n_sentences:
            message = f"sentence_index {sentence_index} but the output has {n_sentences} sentences (a stale qas.parquet?)"
            raise DataError(message, file=file, record=record, field="sentence_index")
        question = _qa_text(question, file=file, record=record, field="question")
        answer = _qa_text(answer, file=file, record=record, field="answer")
        key = (example_id, sentence_index, predicate_index)
        seen[key] = seen.get(key, -1) + 1
        qa_id = f"{example_id}/s{sentence_index}/p{predicate_index}/q{seen[key]}"
        spans = _output_spans(offsets, outputs[example_id][sentence_index], file=file, record=record)
        found.setdefault(example_id, []).append(
            Hypothesis(QA, qa_hypothesis(question, answer), sentence_index, qa_id, question, answer, spans)
        )
    return {key: sorted(items, key=lambda h: h.sentence_index) for key, items in found.items()}


def _output_spans(offsets: Sequence[object], sentence: Sentence, *, file: str | Path, record: str) -> tuple[tuple[int, int], ...]:
    """A parser QA's predicate and answer spans, each checked to lie inside the QA's output sentence."""
    fields = PARSER_SPAN_COLUMNS
    values = [_index(value, file=file, record=record, field=field) for value, field in zip(offsets, fields, strict=True)]
    spans = ((values[0], values[1]), (values[2], values[3]))
    span_fields = [f"{first}/{second}" for first, second in zip(fields[::2], fields[1::2], strict=True)]
    for (start, end), field in zip(spans, span_fields, strict=True):
        if not sentence.start <= start < end <= sentence.end:
            where = f"[{sentence.start}, {sentence.end})"
            message = f"span [{start}, {end}) is outside its output sentence {where} (a stale qas.parquet?)"
            raise DataError(message, file=file, record=record, field=field)
    return spans


def token_starts(text: str) -> list[int]:
    """Character offset of each token of a text whose tokens are joined by single spaces."""
    starts, position = [], 0
    for token in text.split(" "):
        starts.append(position)
        position += len(token) + 1
    return starts


def sentence_at(sentences: Sequence[Sentence], offset: int) -> int:
    """Index of the sentence holding character `offset` (the last one starting at or before it)."""
    return max(bisect.bisect_right([s.start for s in sentences], offset) - 1, 0)


def gold_hypotheses(
    qas: pd.DataFrame,
    examples: pd.DataFrame,
    outputs: Mapping[str, Sequence[Sentence]],
    file: str | Path,
    benchmark: str = "",
) -> dict[str, list[Hypothesis]]:
    """The annotated QAs (`qasem_consistency_qas`: `doc_id` = the response's example_id) of `examples`.

    The QA id is the QA table's example_id; the sentence is the output sentence holding the
    predicate token. The response each QA was annotated on must be the example's output.
    """
    _require_columns(qas, GOLD_COLUMNS, file, "gold")
    texts = dict(zip(examples["example_id"].astype(str), examples["output"], strict=True))
    rows = qas[qas["doc_id"].isin(set(texts))]
    if len(texts) and rows.empty:
        message = f"no gold QA belongs to an example of benchmark {benchmark!r} (doc_id must be the response's example_id)"
        raise DataError(message, file=file, field="doc_id")
    found: dict[str, list[Hypothesis]] = {}
    starts: dict[str, list[int]] = {}
    for qa_id, example_id, predicate, question, answer, response in zip(*(rows[c] for c in GOLD_COLUMNS), strict=True):
        example_id, record = str(example_id), str(qa_id)
        if response != texts[example_id]:
            message = "the response this QA was annotated on is not the example's output"
            raise DataError(message, file=file, record=record, field="response")
        if example_id not in starts:
            starts[example_id] = token_starts(texts[example_id])
        token = _index(predicate, file=file, record=record, field="predicate_idx")
        if token >= len(starts[example_id]):
            raise DataError(f"predicate_idx {token} is outside the response", file=file, record=record, field="predicate_idx")
        question = _qa_text(question, file=file, record=record, field="question")
        answer = _qa_text(answer, file=file, record=record, field="answer")
        sentence_index = sentence_at(outputs.get(example_id, ()), starts[example_id][token])
        found.setdefault(example_id, []).append(
            Hypothesis(QA, qa_hypothesis(question, answer), sentence_index, record, question, answer)
        )
    return found


def sentence_hypotheses(sentences: Sequence[Sentence]) -> list[Hypothesis]:
    return [
        Hypothesis(SENTENCE, sentence.text, index, output_spans=((sentence.start, sentence.end),))
        for index, sentence in enumerate(sentences)
    ]


# --- scoring ----------------------------------------------------------------------------------


@dataclass
class ExampleUnits:
    """One example's hypotheses and how they were chosen."""

    example_id: str
    doc_id: str
    hypotheses: list[Hypothesis]
    decomposition: str  # "qas", "sentences" (asked, or the fallback of an output without QAs), "none"
    n_qas: int
    n_sentences: int
    sentences_without_qas: int


def example_units(
    examples: pd.DataFrame,
    outputs: Mapping[str, Sequence[Sentence]],
    qas: Mapping[str, list[Hypothesis]] | None,
) -> list[ExampleUnits]:
    """Each example's hypotheses: its QAs (`qas` given), else or when it has none, its output sentences."""
    units = []
    for example_id, doc_id in zip(examples["example_id"].astype(str), examples["doc_id"].astype(str), strict=True):
        sentences = list(outputs.get(example_id, ()))
        own = [] if qas is None else qas.get(example_id, [])
        if own:
            covered = {h.sentence_index for h in own}
            hypotheses, used = own, "qas"
            without = sum(index not in covered for index in range(len(sentences)))
        else:
            hypotheses, without = sentence_hypotheses(sentences), 0
            used = "sentences" if sentences else "none"
        units.append(ExampleUnits(example_id, doc_id, hypotheses, used, len(own), len(sentences), without))
    return units


def score_benchmark(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    scorer: PairScorer,
    settings: QASemConsistencySettings,
    engine: EngineSettings | None = None,
    cache: PairCache | None = None,
    *,
    qas: pd.DataFrame | None = None,
    qas_file: str | Path = "qas table",
    benchmark: str = "",
) -> tuple[pd.DataFrame, dict[str, int]]:
    """QASemConsistency of every example (`example_id`, `doc_id`, `output`) from its preprocessed sentences.

    `qas` is the QA table of `settings.qa_source` (required when `decomposition` is `qas`).
    """
    scorer = with_support_head(scorer, settings.support_head)
    sources = sentences_by_owner(sentences, "source", "doc_id")
    outputs = sentences_by_owner(sentences, "output", "example_id")
    by_example: dict[str, list[Hypothesis]] | None = None
    if settings.decomposition == "qas":
        if qas is None:
            raise ConfigError(f"qasem_consistency decomposition 'qas' needs the {settings.qa_source} QA table")
        ids = examples["example_id"].astype(str).tolist()
        if settings.qa_source == "gold":
            by_example = gold_hypotheses(qas, examples, outputs, qas_file, benchmark)
        else:
            by_example = parser_hypotheses(qas, outputs, ids, qas_file)
    chunks: dict[str, list[SentenceChunk]] = {}
    for doc_id in dict.fromkeys(examples["doc_id"].astype(str)):
        chunks[doc_id], _ = alignscore_chunks(sources.get(doc_id, []), settings.words_per_chunk, settings.chunk_policy)
    units = example_units(examples, outputs, by_example)
    pairs: list[tuple[str, str]] = []
    owners: list[tuple[int, int, int]] = []  # (example row, hypothesis, chunk) of each pair
    for row, example in enumerate(units):
        for index, hypothesis in enumerate(example.hypotheses):
            for chunk_index, chunk in enumerate(chunks[example.doc_id]):
                pairs.append((chunk.text, hypothesis.text))
                owners.append((row, index, chunk_index))
    result = score_pairs(scorer, pairs, engine, cache, description="qasem_consistency pairs")
    supports = result.scores
    if settings.class_prior == "balanced":  # monotone: the max over chunks is the same chunk's
        supports = balanced_support(supports, float(settings.aligned_share))  # type: ignore[arg-type]
    best = best_premises(owners, supports, result.premise_cut)  # (row, hypothesis) -> (score, chunk, cut)
    records = [_record(row, example, chunks[example.doc_id], best, settings) for row, example in enumerate(units)]
    counts = {
        **result.counts,
        "examples": len(units),
        "documents": len(chunks),
        "qa_hypotheses": sum(len(e.hypotheses) for e in units if e.decomposition == "qas"),
        "sentence_hypotheses": sum(len(e.hypotheses) for e in units if e.decomposition == "sentences"),
        "examples_without_qas": sum(e.decomposition != "qas" for e in units) if by_example is not None else 0,
        "examples_scored_by_sentences_fallback": sum(e.decomposition == "sentences" for e in units)
        if by_example is not None
        else 0,
        "examples_without_output_sentences": sum(e.n_sentences == 0 for e in units),
        "examples_scored_nan": sum(math.isnan(record["score"]) for record in records),
        "output_sentences_without_qas": sum(e.sentences_without_qas for e in units),
    }
    _log_counts(counts)
    return pd.DataFrame.from_records(records), counts


def _record(
    row: int,
    example: ExampleUnits,
    chunks: Sequence[SentenceChunk],
    best: Mapping[tuple[int, int], tuple[float, int, int]],
    settings: QASemConsistencySettings,
) -> dict[str, object]:
    detail = []
    for index, hypothesis in enumerate(example.hypotheses):
        score, chunk_index, cut = best[(row, index)]
        detail.append(
            {
                "unit": hypothesis.unit,
                "qa_id": hypothesis.qa_id,
                "sentence_index": hypothesis.sentence_index,
                "output_spans": [list(span) for span in hypothesis.output_spans],
                "question": hypothesis.question,
                "answer": hypothesis.answer,
                "hypothesis": hypothesis.text,
                "score": score,
                "supported": bool(score >= settings.threshold),
                "best_chunk": chunk_index,
                "chunk_start": chunks[chunk_index].start,
                "chunk_end": chunks[chunk_index].end,
                "premise_pieces_cut": cut,
            }
        )
    return {
        "example_id": example.example_id,
        "score": aggregate_support([item["score"] for item in detail], settings.aggregation, settings.threshold),
        "decomposition": example.decomposition,
        "n_units": len(detail),
        "n_qas": example.n_qas,
        "n_sentences": example.n_sentences,
        "n_sentences_without_qas": example.sentences_without_qas,
        "n_chunks": len(chunks),
        "units": detail,
    }


def _log_counts(counts: Mapping[str, int]) -> None:
    if counts["examples_without_qas"]:
        LOG.warning(
            "qasem_consistency: %d examples have no QAs: %d scored by their sentences, the rest (no sentences) NaN",
            counts["examples_without_qas"],
            counts["examples_scored_by_sentences_fallback"],
        )
    if counts["examples_without_output_sentences"]:
        LOG.warning("qasem_consistency: %d examples have no output sentences", counts["examples_without_output_sentences"])
    if counts["output_sentences_without_qas"]:
        LOG.warning(
            "qasem_consistency: %d output sentences have no QAs and are not scored", counts["output_sentences_without_qas"]
        )

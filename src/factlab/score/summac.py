"""SummaC-ZS (Laban et al., 2022) over a preprocessed benchmark.

Reproduced from the reference implementation (tingofurro/summac, `SummaCZS` and `SummaCImager`):
the source is cut into units at a granularity (`sentence`, `2sents`: each sentence joined with the
next by a space, the last one alone; `paragraph`; `document`), every (unit, output sentence) pair
gets an NLI distribution, and per output sentence the score is max over units of P(entail) minus
max over units of P(contradict) (op1 = max; `use_contradiction: false` keeps only the first
term); the example score is the mean over output sentences (op2 = `mean`) or the min (`min`).
The per-sentence detail localises: the unit of the largest P(entail) and its character span in
the source, both maxima, the unit of the largest P(contradict).

`variant` says what happens to SummaC's caps:
- `reference` reproduces them: source units of at most 10 characters are dropped (for `sentence`
  and `2sents` the sentences are dropped before pairing, as `split_2sents` does; `document` is never
  filtered), only the first `max_source_units` (SummaC's `max_doc_sents`, 100) units are kept, and,
  because SummaC splits the output with the same sentence splitter and filter, output sentences of
  at most 10 characters are dropped too. An example left without units or output sentences scores
  0.0, SummaC's all-zero image.
- `corrected` keeps every unit and every output sentence; an empty source is one empty unit (as
  AlignScore does), an output without sentences scores NaN.
Every dropped unit and sentence is counted, never silent (methods.md, "Known defects").

Deliberate deviations from the reference code, in both variants:
- Output sentences are always sentences, whatever the source granularity: this is SummaC's
  two-part granularity `<granularity>-sentence` (a single granularity such as `paragraph` would
  also cut the output into paragraphs), so that every output sentence has a score to localise.
- Sentences come from the preprocess stage (pysbd or spaCy, with offsets), not nltk's punkt.
- Paragraphs are runs of whole source sentences, cut where the text between two sentences holds a
  blank line (or, in a text without any blank line, a line break: SummaC's fallback). A break inside
  a sentence cannot be followed and is counted (`paragraph_breaks_inside_sentences`). When the
  example frame has no `source` text, or the offsets do not index it, a document is one unit
  (counted in `paragraph_fallback_documents`).
- Pairs go through the engine: the scorer's own length limit with premise-first cuts, counted,
  instead of SummaC's silent `max_length=500`; fp32, or bf16 where the CPU or GPU has it (`score.engine.precision`), not fp16.
- The NLI model is a `DistributionScorer` (the aligner's 3-way head, or a hub classifier whose
  labels are mapped by name); a 2-label classifier has P(contradict) = 0, so with it the score is
  max P(entail) and the report says so (`scorer_without_contradiction`).
SummaC-Conv (histograms and a learned layer; it reads only the first 10 output sentences) is not
implemented here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from factlab.errors import ConfigError
from factlab.models.engine import EngineSettings, PairCache, score_pair_distributions
from factlab.models.protocols import DISTRIBUTION_CLASSES, DistributionScorer
from factlab.score.sentences import aggregate, sentences_by_owner
from factlab.text.sentences import Sentence

LOG = logging.getLogger(__name__)
GRANULARITIES = ("sentence", "2sents", "paragraph", "document")
OP2 = ("mean", "min")
VARIANTS = ("reference", "corrected")
SHORT_UNIT_CHARS = 10  # SummaC keeps a unit only when `len(unit) > 10`
REFERENCE_MAX_UNITS = 100  # SummaC's `max_doc_sents`
ENTAIL, CONTRADICT = DISTRIBUTION_CLASSES.index("entail"), DISTRIBUTION_CLASSES.index("contradict")


@dataclass(frozen=True)
class SummaCSettings:
    granularity: str = "sentence"
    use_contradiction: bool = True  # score = max P(e) - max P(c); False: max P(e)
    op2: str = "mean"  # over output sentences
    variant: str = "reference"  # reference: SummaC's caps; corrected: keep everything
    max_source_units: int = REFERENCE_MAX_UNITS  # the reference variant's cap on source units

    def __post_init__(self) -> None:
        if self.granularity not in GRANULARITIES:
            raise ConfigError(f"unknown summac granularity {self.granularity!r}; expected one of {GRANULARITIES}")
        if self.op2 not in OP2:
            raise ConfigError(f"unknown summac op2 {self.op2!r}; expected one of {OP2}")
        if self.variant not in VARIANTS:
            raise ConfigError(f"unknown summac variant {self.variant!r}; expected one of {VARIANTS}")
        if self.max_source_units < 1:
            raise ConfigError(f"summac max_source_units must be positive, got {self.max_source_units}")

    @property
    def reference(self) -> bool:
        return self.variant == "reference"


@dataclass(frozen=True)
class SourceUnit:
    text: str
    start: int  # character span in the source (of the first and last sentence the unit holds)
    end: int


@dataclass
class UnitReport:
    """What building one document's units did; reports add up with `add`."""

    short_dropped: int = 0  # units (or, for sentence/2sents, sentences) of <= 10 characters (reference)
    over_cap_dropped: int = 0  # units beyond `max_source_units` (reference)
    paragraph_fallback: int = 0  # 1: paragraphs could not be found, the document is one unit
    breaks_inside_sentences: int = 0  # paragraph breaks inside a sentence, which units cannot follow

    def add(self, other: UnitReport) -> None:
        self.short_dropped += other.short_dropped
        self.over_cap_dropped += other.over_cap_dropped
        self.paragraph_fallback += other.paragraph_fallback
        self.breaks_inside_sentences += other.breaks_inside_sentences


def source_units(
    sentences: Sequence[Sentence], source: str | None, settings: SummaCSettings
) -> tuple[list[SourceUnit], UnitReport]:
    """The source units SummaC-ZS scores against, with what the reference caps dropped.

    `source` is the source text the sentence offsets index (None when unknown: paragraphs then
    fall back to the whole document).
    """
    report = UnitReport()
    if not sentences:
        # SummaC's splitters return nothing for an empty text, except `document` ([text]); the
        # corrected variant scores one empty unit, as AlignScore does, so that the model judges it.
        keep_empty = not settings.reference or settings.granularity == "document"
        return ([SourceUnit("", 0, 0)] if keep_empty else []), report
    if source is not None and not offsets_index(sentences, source):
        source = None
    if settings.reference and settings.granularity in ("sentence", "2sents"):
        kept = [s for s in sentences if len(s.text) > SHORT_UNIT_CHARS]
        report.short_dropped = len(sentences) - len(kept)
        sentences = kept
    units = _granular_units(sentences, source, settings.granularity, report)
    if settings.reference and settings.granularity == "paragraph":
        kept_units = [unit for unit in units if len(unit.text) > SHORT_UNIT_CHARS]
        report.short_dropped = len(units) - len(kept_units)
        units = kept_units
    if settings.reference and len(units) > settings.max_source_units:
        report.over_cap_dropped = len(units) - settings.max_source_units
        units = units[: settings.max_source_units]
    return units, report


def offsets_index(sentences: Sequence[Sentence], source: str) -> bool:
    return all(source[s.start : s.end] == s.text for s in sentences)


def _granular_units(sentences: Sequence[Sentence], source: str | None, granularity: str, report: UnitReport) -> list[SourceUnit]:
    if not sentences:
        return []
    if granularity == "sentence":
        return [SourceUnit(s.text, s.start, s.end) for s in sentences]
    if granularity == "2sents":
        return two_sentence_units(sentences)
    if granularity == "paragraph" and source is not None:
        groups, report.breaks_inside_sentences = paragraph_groups(sentences, source)
        return [_span_unit(sentences[first:stop], source) for first, stop in groups]
    report.paragraph_fallback = int(granularity == "paragraph")
    return [_span_unit(sentences, source)]


def two_sentence_units(sentences: Sequence[Sentence]) -> list[SourceUnit]:
    """SummaC's `split_2sents`: sentence i joined with sentence i + 1 by a space, for every i (the last one alone)."""
    units = []
    for index, first in enumerate(sentences):
        pair = sentences[index : index + 2]
        units.append(SourceUnit(" ".join(s.text for s in pair), first.start, pair[-1].end))
    return units


def paragraph_groups(sentences: Sequence[Sentence], source: str) -> tuple[list[tuple[int, int]], int]:
    """Runs `(first, stop)` of sentences between paragraph breaks, and the breaks found inside sentences.

    SummaC splits on blank lines ("\\n\\n"), or on line breaks when the text has no blank line.
    """
    marker = "\n\n" if "\n\n" in source else "\n"
    inside = sum(s.text.count(marker) for s in sentences)
    groups, first = [], 0
    for index in range(1, len(sentences)):
        if marker in source[sentences[index - 1].end : sentences[index].start]:
            groups.append((first, index))
            first = index
    groups.append((first, len(sentences)))
    return groups, inside


def _span_unit(sentences: Sequence[Sentence], source: str | None) -> SourceUnit:
    """Consecutive sentences as one unit: the source text they span, or (no source) joined by spaces."""
    start, end = sentences[0].start, sentences[-1].end
    text = source[start:end] if source is not None else " ".join(s.text for s in sentences)
    return SourceUnit(text, start, end)


def output_sentences(sentences: Sequence[Sentence], settings: SummaCSettings) -> list[tuple[int, Sentence]]:
    """(index, sentence) of the output sentences scored: the reference drops those of <= 10 characters, as SummaC."""
    indexed = list(enumerate(sentences))
    if settings.reference:
        return [(index, s) for index, s in indexed if len(s.text) > SHORT_UNIT_CHARS]
    return indexed


@dataclass
class ExampleBlock:
    """One example's pairs: `len(sentences) x n_units` consecutive pairs from `offset`, sentence-major."""

    example_id: str
    doc_id: str
    sentences: list[tuple[int, Sentence]]
    n_output_sentences: int  # before the reference filter
    offset: int


@dataclass
class SummaCPairs:
    units: dict[str, list[SourceUnit]]  # doc_id -> source units
    blocks: list[ExampleBlock]
    pairs: list[tuple[str, str]] = field(default_factory=list)
    report: UnitReport = field(default_factory=UnitReport)
    empty_sources: int = 0


def summac_pairs(examples: pd.DataFrame, sentences: pd.DataFrame, settings: SummaCSettings) -> SummaCPairs:
    """Every (unit, output sentence) pair SummaC-ZS scores for `examples` (`example_id`, `doc_id`, optional `source`)."""
    sources = sentences_by_owner(sentences, "source", "doc_id")
    outputs = sentences_by_owner(sentences, "output", "example_id")
    texts = _source_texts(examples)
    job = SummaCPairs({}, [])
    for doc_id in dict.fromkeys(examples["doc_id"].astype(str)):
        job.units[doc_id], report = source_units(sources.get(doc_id, []), texts.get(doc_id), settings)
        job.report.add(report)
        job.empty_sources += not sources.get(doc_id)
    for example_id, doc_id in zip(examples["example_id"].astype(str), examples["doc_id"].astype(str), strict=True):
        scored = output_sentences(outputs.get(example_id, []), settings)
        units = job.units[doc_id] if scored else []
        job.blocks.append(ExampleBlock(example_id, doc_id, scored, len(outputs.get(example_id, [])), len(job.pairs)))
        job.pairs += [(unit.text, sentence.text) for _, sentence in scored for unit in units]
    return job


def _source_texts(examples: pd.DataFrame) -> Mapping[str, str]:
    if "source" not in examples.columns:
        return {}
    texts: dict[str, str] = {}
    for doc_id, source in zip(examples["doc_id"].astype(str), examples["source"], strict=True):
        if isinstance(source, str):
            texts.setdefault(doc_id, source)
    return texts


@dataclass
class SentenceMaxima:
    """Per output sentence (rows of an example's [sentences, units, 3] block): SummaC-ZS's op1 = max."""

    score: np.ndarray
    max_entail: np.ndarray
    max_contradict: np.ndarray
    entail_unit: np.ndarray  # argmax over units of P(entail): the unit that supports the sentence best
    contradict_unit: np.ndarray


def sentence_maxima(block: np.ndarray, use_contradiction: bool) -> SentenceMaxima:
    entail, contradict = block[..., ENTAIL], block[..., CONTRADICT]
    max_entail, max_contradict = entail.max(axis=1), contradict.max(axis=1)
    score = max_entail - max_contradict if use_contradiction else max_entail
    return SentenceMaxima(score, max_entail, max_contradict, entail.argmax(axis=1), contradict.argmax(axis=1))


def score_summac_zs(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    scorer: DistributionScorer,
    settings: SummaCSettings,
    engine: EngineSettings | None = None,
    cache: PairCache | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """SummaC-ZS of every example (`example_id`, `doc_id`; `source` for paragraphs) from its preprocessed sentences."""
    job = summac_pairs(examples, sentences, settings)
    result = score_pair_distributions(scorer, job.pairs, engine, cache, description="summac pairs")
    records = []
    zero_without_units = empty_outputs = dropped_outputs = 0
    for block in job.blocks:
        units = job.units[block.doc_id]
        size = len(block.sentences) * len(units)
        probs = result.probabilities[block.offset : block.offset + size].reshape(len(block.sentences), len(units), 3)
        cuts = result.premise_cut[block.offset : block.offset + size].reshape(len(block.sentences), len(units))
        detail = _sentence_detail(block, units, probs, cuts, settings.use_contradiction)
        empty_outputs += block.n_output_sentences == 0
        dropped_outputs += block.n_output_sentences - len(block.sentences)
        if detail:
            score = aggregate([item["support"] for item in detail], settings.op2)
        elif settings.reference:
            score = 0.0  # SummaC's all-zero image for a side without units
            zero_without_units += 1
        else:
            score = float("nan")
        records.append(
            {
                "example_id": block.example_id,
                "score": score,
                "n_sentences": len(detail),
                "n_chunks": len(units),
                "n_sentences_dropped": block.n_output_sentences - len(block.sentences),
                "sentences": detail,
            }
        )
    without_contradiction = int(settings.use_contradiction and not getattr(scorer, "has_contradiction", True))
    counts = {
        **result.counts,
        "examples": len(records),
        "documents": len(job.units),
        "source_units": sum(len(units) for units in job.units.values()),
        "empty_sources": job.empty_sources,
        "examples_without_output_sentences": empty_outputs,
        "examples_scored_zero_without_units": zero_without_units,
        "dropped_short_source_units": job.report.short_dropped,
        "dropped_source_units_over_cap": job.report.over_cap_dropped,
        "dropped_short_output_sentences": dropped_outputs,
        "paragraph_fallback_documents": job.report.paragraph_fallback,
        "paragraph_breaks_inside_sentences": job.report.breaks_inside_sentences,
        "scorer_without_contradiction": without_contradiction,
    }
    _log_drops(counts)
    return pd.DataFrame.from_records(records), counts


def _sentence_detail(
    block: ExampleBlock, units: Sequence[SourceUnit], probs: np.ndarray, cuts: np.ndarray, use_contradiction: bool
) -> list[dict[str, object]]:
    if probs.size == 0:
        return []
    maxima = sentence_maxima(probs, use_contradiction)
    detail = []
    for row, (sentence_index, sentence) in enumerate(block.sentences):
        best = int(maxima.entail_unit[row])
        detail.append(
            {
                "sentence_index": sentence_index,  # index among all output sentences, dropped ones included
                "sentence": sentence.text,
                "start": sentence.start,
                "end": sentence.end,
                "support": float(maxima.score[row]),
                "best_chunk": best,
                "chunk_start": units[best].start,
                "chunk_end": units[best].end,
                "premise_pieces_cut": int(cuts[row, best]),
                "max_entail": float(maxima.max_entail[row]),
                "max_contradict": float(maxima.max_contradict[row]),
                "contradict_chunk": int(maxima.contradict_unit[row]),
            }
        )
    return detail


def _log_drops(counts: Mapping[str, int]) -> None:
    for name in (
        "dropped_short_source_units",
        "dropped_source_units_over_cap",
        "dropped_short_output_sentences",
        "examples_scored_zero_without_units",
        "paragraph_fallback_documents",
        "paragraph_breaks_inside_sentences",
    ):
        if counts[name]:
            LOG.warning("summac: %s = %d", name, counts[name])
    if counts["examples_without_output_sentences"]:
        LOG.warning("summac: %d examples have no output sentences", counts["examples_without_output_sentences"])
    if counts["scorer_without_contradiction"]:
        LOG.warning("summac: the scorer has no contradiction class; the score is max P(entail)")

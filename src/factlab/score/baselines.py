"""FRANK's baseline scorers (Pagnoni et al., 2021) of an output against its source.

Each scorer takes the examples (`example_id, doc_id, source, output`) and the preprocess stage's
sentence table, and returns `(scores, counts)`: a frame with `example_id, score` (higher = more
consistent) and a `sentences` column (per output sentence: `sentence_index, sentence, start, end,
support`, plus where meaningful the best-matching source sentence and its character span in the
source), and a dict of counts where every cut and every example left without a score is counted.
An example whose output or source has no sentences scores NaN in every scorer (counted in
`examples_without_output_sentences` / `examples_without_source_sentences`).

- `score_embedding_cosine`: all-MiniLM-L6-v2 sentence embeddings (the packaged offline copy:
  `factlab.runtime`), mean-pooled over the word pieces of each sentence ([CLS] and [SEP] included,
  as sentence-transformers pools) and L2-normalised; an output sentence's support is its largest
  cosine with a source sentence, the example score the mean over output sentences. Sentences are
  cut to `max_length` word pieces (256: the model's `max_seq_length`), every cut counted.
- `score_rouge`: ROUGE-1/2/L of the whole output (prediction) against the whole source (target)
  with the `rouge-score` package. FRANK's released `Rouge 1/2/L` are F-measures with Porter
  stemming (the defaults here) computed against the *reference summary*; this scorer compares with
  the source (pass the reference as `source` to get FRANK's numbers exactly, see the tests).
  Support of an output sentence: the same ROUGE against the whole source; best source sentence:
  the one with the highest ROUGE against it.
- `score_bertscore_precision`: BERTScore precision of the output against the source, FRANK's
  "BertScore P Art", no idf, no baseline rescaling (as FRANK). bert-score works offline here: its
  tokenizer, model (an encoder folder cut to an explicit `num_layers`: the packaged MiniLM by
  default, `mpnet` the packaged all-mpnet-base-v2 unpacked by rule `unpack_mpnet`) and embedding
  function do the encoding; the greedy matching (each candidate token's best cosine, averaged) is
  factlab's few lines, so that batches can be sorted by length (bert-score pads every batch of a
  call to its longest text, a 512-piece source among short sentences) and so that `chunk` can pool
  chunks per token; the tests check it equals `bert_score.BERTScorer.score`. Deviation: FRANK used
  bert-score's default English model (roberta-large, not available offline), so values differ
  (Spearman with FRANK's released scores is measured in the tests). Long sources (`long_source`):
  `truncate` (default) is FRANK's behaviour, bert-score cutting the source to 510 word pieces plus
  [CLS]/[SEP], here counted (`references_cut`, `reference_pieces_cut`); `chunk` packs whole
  source sentences into chunks of at most 510 word pieces and gives each output token its best
  cosine over the tokens of all chunks, so nothing is lost (bert-score's own multi-reference mode
  takes the max per example, not per token). Support of an output sentence: its BERTScore
  precision as a candidate of its own; no best source sentence (token matches scatter).
- `score_openie_triples`: FRANK's OpenIE baseline on the preprocess triples: each element
  (subject, relation, object) embedded with MiniLM as above; an output triple is matched when some
  source triple has all three cosines above `threshold` (0.6); score = share of matched output
  triples, NaN (counted) for an output without triples. Deviations: triples come from factlab's
  spaCy-based extractor (`factlab.preprocess.triples`), not Stanford OpenIE, and the source gets
  no coreference replacement. The best source triple of an output triple is the one whose
  smallest element cosine is largest.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from factlab.batching import length_batches
from factlab.errors import ConfigError, DataError
from factlab.preprocess.chunking import pack_sentences
from factlab.preprocess.sentences import Sentence
from factlab.runtime import encoder_path, load_encoder, load_tokenizer, select_device
from factlab.score.sentences import sentences_by_owner

if TYPE_CHECKING:  # torch loads inside the encoder functions: the rouge baseline never needs it
    import torch

LOG = logging.getLogger(__name__)
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
ROUGE_MEASURES = ("precision", "recall", "fmeasure")
LONG_SOURCE_POLICIES = ("truncate", "chunk")
MODEL_MAX_LENGTH = 512  # MiniLM's position embeddings: word pieces per text, [CLS] and [SEP] included
TRIPLE_ELEMENTS = ("subject", "relation", "object")
TRIPLE_COLUMNS = ("side", "doc_id", "example_id", "sentence_index", "triple_index", *TRIPLE_ELEMENTS)


# ---------------------------------------------------------------------------------------------
# Settings


@dataclass(frozen=True)
class BatchSettings:
    """How texts are batched through a model: sorted by length, so that padding stays small."""

    token_budget: int = 16384  # padded word pieces per batch (rows x longest row)
    max_batch: int = 256  # rows per batch
    max_padding: float = 0.25  # padding per batch at most this share of its real word pieces
    progress: bool = True

    def __post_init__(self) -> None:
        if self.token_budget < MODEL_MAX_LENGTH or self.max_batch < 1:
            raise ConfigError(
                f"token_budget ({self.token_budget}) must hold one row of {MODEL_MAX_LENGTH} word pieces "
                f"and max_batch ({self.max_batch}) must be positive"
            )
        if self.max_padding < 0:
            raise ConfigError(f"max_padding must be >= 0, got {self.max_padding}")


def batched(settings: BatchSettings, lengths: Sequence[int]) -> list[list[int]]:
    """`lengths`' indices in batches of similar length within `settings` (padding also capped: a stricter cut than
    the engine's, since on CPU every padded position costs as much as a real one)."""
    return length_batches(lengths, settings.max_batch, settings.token_budget, settings.max_padding)


@dataclass(frozen=True)
class EncoderSettings(BatchSettings):
    """The MiniLM sentence encoder of the embedding scorers."""

    max_length: int = 256  # word pieces with [CLS]/[SEP]; all-MiniLM-L6-v2's max_seq_length

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 3 <= self.max_length <= MODEL_MAX_LENGTH:
            raise ConfigError(f"encoder max_length must be in 3..{MODEL_MAX_LENGTH}, got {self.max_length}")


@dataclass(frozen=True)
class EmbeddingCosineSettings(EncoderSettings):
    pass


@dataclass(frozen=True)
class OpenIETriplesSettings(EncoderSettings):
    threshold: float = 0.6  # FRANK: a triple matches when all three element cosines exceed it

    def __post_init__(self) -> None:
        super().__post_init__()
        if not -1.0 <= self.threshold <= 1.0:
            raise ConfigError(f"openie threshold is a cosine, in [-1, 1]; got {self.threshold}")


@dataclass(frozen=True)
class RougeSettings:
    rouge_type: str = "rougeL"
    measure: str = "fmeasure"  # FRANK's released Rouge columns are F-measures
    use_stemmer: bool = True  # FRANK's numbers are reproduced only with Porter stemming

    def __post_init__(self) -> None:
        if self.rouge_type not in ROUGE_TYPES:
            raise ConfigError(f"unknown rouge_type {self.rouge_type!r}; expected one of {ROUGE_TYPES}")
        if self.measure not in ROUGE_MEASURES:
            raise ConfigError(f"unknown rouge measure {self.measure!r}; expected one of {ROUGE_MEASURES}")


@dataclass(frozen=True)
class BertScoreSettings(BatchSettings):
    # The encoder: `minilm` (the packaged all-MiniLM-L6-v2), `mpnet` (the packaged all-mpnet-base-v2,
    # unpacked by rule unpack_mpnet), or a hub id / local folder (online users).
    model: str = "minilm"
    # Layer whose token embeddings are matched, bert-score's own choice (tuned by bert-score on WMT16, not
    # on factlab's benchmarks) for the nearest model it lists: MiniLM-L6 as distilbert-base-uncased (5 of
    # 6), MPNet as microsoft/mpnet-base (8 of 12). The last layers are trained for pooled embeddings.
    num_layers: int = 5
    long_source: str = "truncate"  # truncate (FRANK, counted) | chunk (no loss)
    documents_per_call: int = 32  # documents whose token embeddings are held at once (bounds memory)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.model:
            raise ConfigError("bertscore model must be minilm, mpnet, or a hub id or folder")
        if self.num_layers < 1:
            raise ConfigError(f"bertscore num_layers must be >= 1, got {self.num_layers}")
        if self.long_source not in LONG_SOURCE_POLICIES:
            raise ConfigError(f"unknown bertscore long_source {self.long_source!r}; expected one of {LONG_SOURCE_POLICIES}")
        if self.documents_per_call < 1:
            raise ConfigError(f"bertscore documents_per_call must be positive, got {self.documents_per_call}")


# ---------------------------------------------------------------------------------------------
# Shared: who owns which sentences, and the result frame


@dataclass
class Owners:
    """The examples' ids and their sentences (`sentences_by_owner` of the preprocess table)."""

    example_ids: list[str]
    doc_ids: list[str]
    sources: dict[str, list[Sentence]]  # doc_id -> source sentences
    outputs: dict[str, list[Sentence]]  # example_id -> output sentences

    @classmethod
    def of(cls, examples: pd.DataFrame, sentences: pd.DataFrame) -> Owners:
        missing = [name for name in ("example_id", "doc_id") if name not in examples.columns]
        if missing:
            raise DataError(f"the examples lack the columns {missing}", field=missing[0])
        return cls(
            examples["example_id"].astype(str).tolist(),
            examples["doc_id"].astype(str).tolist(),
            sentences_by_owner(sentences, "source", "doc_id"),
            sentences_by_owner(sentences, "output", "example_id"),
        )

    def rows(self) -> Iterator[tuple[int, str, str, list[Sentence], list[Sentence]]]:
        """(row, example_id, doc_id, output sentences, source sentences) of every example."""
        for row, (example_id, doc_id) in enumerate(zip(self.example_ids, self.doc_ids, strict=True)):
            yield row, example_id, doc_id, self.outputs.get(example_id, []), self.sources.get(doc_id, [])


@dataclass
class Scored:
    """Records of the score frame being built, and the counts every scorer reports."""

    records: list[dict[str, Any]] = field(default_factory=list)
    without_output: int = 0
    without_source: int = 0

    def skip(self, example_id: str, outputs: Sequence[Sentence], sources: Sequence[Sentence]) -> bool:
        """Record NaN for an example with nothing to score (no output or no source sentence)."""
        if outputs and sources:
            return False
        self.without_output += not outputs
        self.without_source += bool(outputs) and not sources
        self.records.append({"example_id": example_id, "score": float("nan"), "n_sentences": len(outputs), "sentences": []})
        return True

    def add(self, example_id: str, score: float, detail: list[dict[str, Any]], **extra: Any) -> None:
        self.records.append(
            {"example_id": example_id, "score": float(score), "n_sentences": len(detail), **extra, "sentences": detail}
        )

    def result(self, name: str, **counts: int) -> tuple[pd.DataFrame, dict[str, int]]:
        all_counts = {
            "examples": len(self.records),
            "examples_without_output_sentences": self.without_output,
            "examples_without_source_sentences": self.without_source,
            **counts,
        }
        if self.without_output or self.without_source:
            LOG.warning(
                "%s: %d examples without output sentences and %d without source sentences score NaN",
                name,
                self.without_output,
                self.without_source,
            )
        return pd.DataFrame.from_records(self.records), all_counts


def sentence_detail(index: int, sentence: Sentence, support: float, **extra: Any) -> dict[str, Any]:
    return {
        "sentence_index": index,
        "sentence": sentence.text,
        "start": sentence.start,
        "end": sentence.end,
        "support": support,
        **extra,
    }


def best_source(sources: Sequence[Sentence], index: int) -> dict[str, int]:
    return {"best_source_sentence": index, "source_start": sources[index].start, "source_end": sources[index].end}


# ---------------------------------------------------------------------------------------------
# The MiniLM sentence encoder


@dataclass
class SentenceEncoder:
    model: Any  # a transformers BertModel (factlab.runtime.load_encoder)
    tokenizer: Any
    device: torch.device
    precision: str = "fp32"  # fp32 | bf16 (resolved: factlab.models.engine.resolve_precision)


def load_sentence_encoder(device: str = "auto", layers: int | None = None, precision: str = "fp32") -> SentenceEncoder:
    """The packaged all-MiniLM-L6-v2 (no download) on `device`; `layers` keeps the first n (tests);
    `precision` as the engine's (fp32 | bf16 | auto: bf16 where the device computes it natively)."""
    from factlab.models.engine import resolve_precision

    torch_device = select_device(device)
    model = load_encoder(pretrained=True, layers=layers).to(torch_device).eval()
    return SentenceEncoder(model, load_tokenizer(), torch_device, resolve_precision(precision, torch_device))


@dataclass
class Embedded:
    vectors: np.ndarray  # (texts, dim), float32, unit length
    pieces_cut: np.ndarray  # word pieces left out of each text (0 = whole)
    counts: dict[str, int]


def embed_texts(
    texts: Sequence[str], encoder: SentenceEncoder, settings: EncoderSettings, description: str = "embeddings"
) -> Embedded:
    """Mean-pooled, L2-normalised embeddings of `texts` (distinct: the caller deduplicates), in order.

    Each text becomes `[CLS] pieces [SEP]` cut to `max_length` (counted); batches hold texts of
    similar length (`factlab.batching.length_batches`).
    """
    import torch

    dim = int(encoder.model.config.hidden_size)
    tokenizer = encoder.tokenizer
    pieces = tokenizer(list(texts), add_special_tokens=False)["input_ids"] if texts else []
    room = settings.max_length - 2
    cut = np.array([max(0, len(ids) - room) for ids in pieces], dtype=np.int64)
    ids = [[tokenizer.cls_token_id, *p[:room], tokenizer.sep_token_id] for p in pieces]
    batches = batched(settings, [len(row) for row in ids])
    vectors = np.zeros((len(texts), dim), np.float32)
    padded = 0
    from factlab.models.engine import inference_context

    with inference_context(encoder.precision, encoder.device):
        for batch in tqdm(batches, desc=description, unit="batch", disable=not settings.progress, mininterval=10):
            width = max(len(ids[i]) for i in batch)
            padded += width * len(batch)
            input_ids = torch.full((len(batch), width), tokenizer.pad_token_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, index in enumerate(batch):
                input_ids[row, : len(ids[index])] = torch.tensor(ids[index])
                mask[row, : len(ids[index])] = 1
            input_ids, mask = input_ids.to(encoder.device), mask.to(encoder.device)
            hidden = encoder.model(input_ids=input_ids, attention_mask=mask).last_hidden_state.float()
            weights = mask.unsqueeze(-1).float()
            pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1)
            vectors[batch] = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
    tokens = sum(len(row) for row in ids)
    counts = {
        "texts_embedded": len(texts),
        "texts_cut": int((cut > 0).sum()),
        "pieces_cut": int(cut.sum()),
        "batches": len(batches),
        "tokens": tokens,
        "padding_tokens": padded - tokens,
    }
    if counts["texts_cut"]:
        LOG.warning(
            "%s: %d texts cut to %d word pieces (%d pieces left out)",
            description,
            counts["texts_cut"],
            settings.max_length,
            counts["pieces_cut"],
        )
    return Embedded(vectors, cut, counts)


def embed_distinct(
    texts: Sequence[str], encoder: SentenceEncoder, settings: EncoderSettings, description: str
) -> tuple[dict[str, int], Embedded]:
    """Each distinct text embedded once: text -> row of the embedding matrix."""
    rows = {text: row for row, text in enumerate(dict.fromkeys(texts))}
    return rows, embed_texts(list(rows), encoder, settings, description)


# ---------------------------------------------------------------------------------------------
# 1. Embedding cosine


def score_embedding_cosine(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    settings: EmbeddingCosineSettings,
    encoder: SentenceEncoder | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Per output sentence the largest cosine with a source sentence; example score = their mean."""
    owners = Owners.of(examples, sentences)
    encoder = encoder or load_sentence_encoder()
    texts = [s.text for _, _, _, outputs, sources in owners.rows() if outputs for s in (*sources, *outputs)]
    rows, embedded = embed_distinct(texts, encoder, settings, "embedding cosine")
    scored = Scored()
    for _, example_id, _, outputs, sources in owners.rows():
        if scored.skip(example_id, outputs, sources):
            continue
        out_rows = [rows[s.text] for s in outputs]
        similarity = embedded.vectors[out_rows] @ embedded.vectors[[rows[s.text] for s in sources]].T
        best = similarity.argmax(axis=1)
        detail = [
            sentence_detail(
                index,
                sentence,
                float(similarity[index, best[index]]),
                **best_source(sources, int(best[index])),
                pieces_cut=int(embedded.pieces_cut[out_rows[index]]),
            )
            for index, sentence in enumerate(outputs)
        ]
        scored.add(example_id, np.mean([item["support"] for item in detail]), detail, n_source_sentences=len(sources))
    return scored.result("embedding cosine", **embedded.counts)


# ---------------------------------------------------------------------------------------------
# 2. ROUGE


@lru_cache(maxsize=4)
def _rouge_scorer(rouge_type: str, use_stemmer: bool) -> Any:
    from rouge_score import rouge_scorer, tokenizers

    class CachedTokenizer(tokenizers.Tokenizer):
        """rouge-score's own tokenizer, remembering each text: a source sentence compared with
        every output sentence of its document is tokenised (and stemmed) once."""

        def __init__(self) -> None:
            self.inner = tokenizers.DefaultTokenizer(use_stemmer=use_stemmer)
            self.tokens = lru_cache(maxsize=4096)(self.inner.tokenize)

        def tokenize(self, text: str) -> list[str]:
            return self.tokens(text)

    return rouge_scorer.RougeScorer([rouge_type], tokenizer=CachedTokenizer())


def rouge_value(target: str, prediction: str, settings: RougeSettings) -> float:
    """ROUGE of `prediction` against `target` (precision = share of the prediction's n-grams found in the target)."""
    score = _rouge_scorer(settings.rouge_type, settings.use_stemmer).score(target, prediction)[settings.rouge_type]
    return float(getattr(score, settings.measure))


def score_rouge(examples: pd.DataFrame, sentences: pd.DataFrame, settings: RougeSettings) -> tuple[pd.DataFrame, dict[str, int]]:
    """ROUGE of each whole output against its whole source (the example score), and per output
    sentence against the whole source (support) and against each source sentence (the best one)."""
    owners = Owners.of(examples, sentences)
    source_of = dict(zip(owners.example_ids, examples["source"].astype(str), strict=True))
    output_of = dict(zip(owners.example_ids, examples["output"].astype(str), strict=True))
    scored = Scored()
    for _, example_id, _, outputs, sources in owners.rows():
        if scored.skip(example_id, outputs, sources):
            continue
        source = source_of[example_id]
        detail = []
        for index, sentence in enumerate(outputs):
            against = [rouge_value(s.text, sentence.text, settings) for s in sources]
            best = int(np.argmax(against))
            detail.append(
                sentence_detail(
                    index,
                    sentence,
                    rouge_value(source, sentence.text, settings),
                    **best_source(sources, best),
                    best_source_rouge=against[best],
                )
            )
        scored.add(example_id, rouge_value(source, output_of[example_id], settings), detail)
    return scored.result("rouge")


# ---------------------------------------------------------------------------------------------
# 3. BERTScore precision


@dataclass
class BertScoreModel:
    """bert-score's tokenizer and model of an encoder folder (what `BERTScorer` loads)."""

    tokenizer: Any  # the slow tokenizer, bert-score's default
    model: Any  # cut to `num_layers` by bert-score
    num_layers: int
    device: str
    precision: str = "fp32"  # fp32 | bf16 (resolved)
    piece_counts: dict[str, int] = field(default_factory=dict)

    @property
    def max_pieces(self) -> int:
        """Word pieces of a text that bert-score keeps ([CLS] and [SEP] take two of the model's 512)."""
        return int(self.tokenizer.model_max_length) - 2

    def pieces(self, text: str) -> int:
        if text not in self.piece_counts:
            self.piece_counts[text] = len(self.tokenizer.tokenize(text.strip()))  # bert-score strips before encoding
        return self.piece_counts[text]

    def cut(self, text: str) -> int:
        """Word pieces of `text` that bert-score leaves out."""
        return max(0, self.pieces(text) - self.max_pieces)


def bertscore_encoder(settings: BertScoreSettings, unpacked_mpnet: str | None = None) -> str:
    """The folder (or hub id) of the encoder `settings.model` names; `mpnet` is the unpack_mpnet folder."""
    if settings.model == "minilm":
        return str(encoder_path())
    if settings.model == "mpnet":
        if not unpacked_mpnet:
            raise ConfigError("bertscore model mpnet needs the folder unpacked by rule unpack_mpnet (--encoder)")
        return unpacked_mpnet
    return settings.model


def load_bertscore(
    settings: BertScoreSettings, device: str = "auto", path: str | None = None, precision: str = "fp32"
) -> BertScoreModel:
    """bert-score's model and tokenizer of the encoder folder `path` (default: the packaged MiniLM), so
    nothing is downloaded; `num_layers` must be within the encoder's layers; `precision` as the engine's."""
    from bert_score.utils import get_model, get_tokenizer
    from transformers import AutoConfig
    from transformers.utils import logging as transformers_logging

    from factlab.models.engine import resolve_precision

    transformers_logging.set_verbosity_error()  # the unused pooler weights would be reported
    path = path or bertscore_encoder(settings)
    layers = int(AutoConfig.from_pretrained(path).num_hidden_layers)
    if settings.num_layers > layers:
        raise ConfigError(f"bertscore num_layers is {settings.num_layers} but {settings.model} has {layers} layers")
    torch_device = select_device(device)
    model = get_model(path, settings.num_layers).to(torch_device)
    tokenizer = get_tokenizer(path, use_fast=False)
    return BertScoreModel(tokenizer, model, settings.num_layers, str(torch_device), resolve_precision(precision, torch_device))


def source_chunks(source: str, sentences: Sequence[Sentence], bert: BertScoreModel) -> list[str]:
    """Whole source sentences packed up to bert-score's length, as slices of the source. A sentence
    longer than that alone stays one chunk, which bert-score cuts (counted by the caller)."""
    counts = [bert.pieces(s.text) for s in sentences]
    chunks, _ = pack_sentences(sentences, counts, bert.max_pieces, split_long=False)
    return [source[chunk.start : chunk.end] for chunk in chunks]


class NoIdf(dict):
    """bert-score's weights without idf: 1 for every word piece, 0 for [CLS] and [SEP]."""

    def __init__(self, cls_id: int, sep_id: int) -> None:
        super().__init__({cls_id: 0.0, sep_id: 0.0})

    def __missing__(self, key: int) -> float:
        return 1.0


def token_embeddings(
    texts: Sequence[str], bert: BertScoreModel, settings: BatchSettings
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Each distinct text's unit token embeddings and bert-score's weights for them, from bert-score's
    own encoding (cut to 512 word pieces) and embedding function, in length-sorted batches."""
    import torch
    from bert_score.utils import get_bert_embedding

    weights = NoIdf(bert.tokenizer.cls_token_id, bert.tokenizer.sep_token_id)
    distinct = list(dict.fromkeys(texts))
    batches = batched(settings, [min(bert.pieces(text), bert.max_pieces) + 2 for text in distinct])
    found: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    from factlab.models.engine import inference_context

    with inference_context(bert.precision, torch.device(bert.device)):
        for batch in batches:
            embeddings, mask, idf = get_bert_embedding(
                [distinct[i] for i in batch], bert.model, bert.tokenizer, weights, device=bert.device
            )
            for row, index in enumerate(batch):
                n = int(mask[row].sum())
                found[distinct[index]] = (
                    torch.nn.functional.normalize(embeddings[row, :n].float(), dim=-1).cpu(),
                    idf[row, :n].float().cpu(),
                )
    return found


def greedy_precision(candidate: tuple[torch.Tensor, torch.Tensor], references: Sequence[torch.Tensor]) -> float:
    """BERTScore precision against the tokens of several references pooled: each candidate token's
    best cosine over every reference token ([CLS]/[SEP] included, as in bert-score), weighted."""
    import torch

    embeddings, weights = candidate
    best = torch.cat([embeddings @ reference.T for reference in references], dim=1).max(dim=1).values
    return float((best * weights).sum() / weights.sum())


def document_groups(doc_ids: Sequence[str], size: int) -> list[list[int]]:
    """Example rows grouped by document, `size` documents a group."""
    by_doc: dict[str, list[int]] = {}
    for row, doc_id in enumerate(doc_ids):
        by_doc.setdefault(doc_id, []).append(row)
    docs = list(by_doc.values())
    return [[row for doc in docs[i : i + size] for row in doc] for i in range(0, len(docs), size)]


def score_bertscore_precision(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    settings: BertScoreSettings,
    device: str = "auto",
    bert: BertScoreModel | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """BERTScore precision of each output (the score) and of each output sentence (its support) against the source."""
    owners = Owners.of(examples, sentences)
    bert = bert or load_bertscore(settings, device)
    if bert.num_layers != settings.num_layers:
        raise ConfigError(f"bertscore num_layers is {settings.num_layers} but the model given was loaded with {bert.num_layers}")
    rows = list(owners.rows())
    source_of = dict(zip(owners.doc_ids, examples["source"].astype(str), strict=True))
    output_of = examples["output"].astype(str).tolist()
    references: dict[str, list[str]] = {}  # doc_id -> [the source] (truncate) or its chunks
    values: dict[int, list[float]] = {}  # row -> [output precision, precision of each output sentence]
    # Documents in groups: the token embeddings of a group's texts are held at once.
    groups = document_groups(owners.doc_ids, settings.documents_per_call)
    for group in tqdm(groups, desc="bertscore", unit="group", disable=not settings.progress, mininterval=10):
        todo = [row for row in group if rows[row][3] and rows[row][4]]
        for row in todo:
            doc_id = owners.doc_ids[row]
            if doc_id not in references:
                whole = settings.long_source == "truncate"
                references[doc_id] = [source_of[doc_id]] if whole else source_chunks(source_of[doc_id], rows[row][4], bert)
        # every output, and every output sentence, is a candidate of its own against the source
        candidates = [(row, text) for row in todo for text in (output_of[row], *(s.text for s in rows[row][3]))]
        chunks = [chunk for doc_id in dict.fromkeys(owners.doc_ids[row] for row in todo) for chunk in references[doc_id]]
        tokens = token_embeddings([text for _, text in candidates] + chunks, bert, settings)
        found = [
            greedy_precision(tokens[text], [tokens[c][0] for c in references[owners.doc_ids[row]]]) for row, text in candidates
        ]
        for (row, _), value in zip(candidates, found, strict=True):
            values.setdefault(row, []).append(value)
    scored = Scored()
    for row, example_id, doc_id, outputs, sources in rows:
        if scored.skip(example_id, outputs, sources):
            continue
        detail = [
            sentence_detail(index, sentence, values[row][1 + index], pieces_cut=bert.cut(sentence.text))
            for index, sentence in enumerate(outputs)
        ]
        source_cut = sum(bert.cut(text) for text in references[doc_id])
        scored.add(example_id, values[row][0], detail, output_pieces_cut=bert.cut(output_of[row]), source_pieces_cut=source_cut)
    candidates = [text for row in values for text in (output_of[row], *(s.text for s in rows[row][3]))]
    return scored.result("bertscore precision", **bertscore_counts(bert, references, candidates))


def bertscore_counts(bert: BertScoreModel, references: dict[str, list[str]], candidates: Sequence[str]) -> dict[str, int]:
    """Every cut bert-score makes: the sources (truncate) or chunks (chunk) of each document, and the candidates."""
    reference_cuts = [bert.cut(text) for texts in references.values() for text in texts]
    candidate_cuts = [bert.cut(text) for text in dict.fromkeys(candidates)]
    counts = {
        "documents": len(references),
        "references": len(reference_cuts),  # the sources (truncate) or their chunks (chunk)
        "references_cut": sum(n > 0 for n in reference_cuts),
        "reference_pieces_cut": sum(reference_cuts),
        "candidates_cut": sum(n > 0 for n in candidate_cuts),  # distinct outputs and output sentences cut
        "candidate_pieces_cut": sum(candidate_cuts),
    }
    if counts["references_cut"] or counts["candidates_cut"]:
        LOG.warning("bertscore: texts cut to %d word pieces: %s", bert.max_pieces, counts)
    return counts


# ---------------------------------------------------------------------------------------------
# 4. OpenIE triples


def _check_triples(triples: pd.DataFrame) -> None:
    missing = [name for name in TRIPLE_COLUMNS if name not in triples.columns]
    if missing:
        raise DataError(
            f"the triples lack the columns {missing} (results/preprocess/<benchmark>/triples.parquet)", field=missing[0]
        )


def _triples_by_owner(triples: pd.DataFrame, side: str, owner: str) -> dict[str, list[tuple[int, str, str, str]]]:
    """owner -> its triples as (sentence_index, subject, relation, object), in sentence and triple order."""
    rows = triples[triples["side"] == side].sort_values([owner, "sentence_index", "triple_index"])
    grouped: dict[str, list[tuple[int, str, str, str]]] = {}
    columns = (rows[owner], rows["sentence_index"], *(rows[name] for name in TRIPLE_ELEMENTS))
    for key, index, subject, relation, obj in zip(*columns, strict=True):
        grouped.setdefault(str(key), []).append((int(index), str(subject), str(relation), str(obj)))
    return grouped


def score_openie_triples(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    settings: OpenIETriplesSettings,
    triples: pd.DataFrame,
    encoder: SentenceEncoder | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Share of each output's triples matched by a source triple (all three element cosines > threshold)."""
    _check_triples(triples)
    owners = Owners.of(examples, sentences)
    source_triples = _triples_by_owner(triples, "source", "doc_id")
    output_triples = _triples_by_owner(triples, "output", "example_id")
    encoder = encoder or load_sentence_encoder()
    elements = [
        element
        for _, example_id, doc_id, outputs, _ in owners.rows()
        if outputs
        for triple in (*output_triples.get(example_id, []), *source_triples.get(doc_id, []))
        for element in triple[1:]
    ]
    rows, embedded = embed_distinct(elements, encoder, settings, "openie triple elements")
    scored = Scored()
    without_triples = without_source_triples = n_triples = n_matched = 0
    for _, example_id, doc_id, outputs, sources in owners.rows():
        if scored.skip(example_id, outputs, sources):
            continue
        found, against = output_triples.get(example_id, []), source_triples.get(doc_id, [])
        _check_sentence_indices(found, len(outputs), f"output of example_id {example_id!r}")
        _check_sentence_indices(against, len(sources), f"source of doc_id {doc_id!r}")
        without_triples += not found
        without_source_triples += bool(found) and not against
        matches = _match_triples(found, against, sources, rows, embedded.vectors, settings.threshold)
        n_triples += len(found)
        n_matched += sum(item["matched"] for item in matches)
        detail = []
        for index, sentence in enumerate(outputs):
            mine = [
                {key: value for key, value in item.items() if key != "sentence_index"}
                for item in matches
                if item["sentence_index"] == index
            ]
            support = float(np.mean([item["matched"] for item in mine])) if mine else float("nan")
            detail.append(sentence_detail(index, sentence, support, n_triples=len(mine), triples=mine))
        score = float(np.mean([item["matched"] for item in matches])) if matches else float("nan")
        scored.add(example_id, score, detail, n_triples=len(found), n_source_triples=len(against))
    if without_triples:
        LOG.warning("openie triples: %d examples have no output triple: their score is NaN", without_triples)
    return scored.result(
        "openie triples",
        examples_without_output_triples=without_triples,
        examples_without_source_triples=without_source_triples,
        output_triples=n_triples,
        output_triples_matched=n_matched,
        **embedded.counts,
    )


def _check_sentence_indices(triples: Sequence[tuple[int, str, str, str]], n_sentences: int, where: str) -> None:
    if any(not 0 <= triple[0] < n_sentences for triple in triples):
        raise DataError(
            f"the triples of the {where} name a sentence it does not have (triples from other sentences?)", record=where
        )


def _match_triples(
    found: Sequence[tuple[int, str, str, str]],
    against: Sequence[tuple[int, str, str, str]],
    sources: Sequence[Sentence],
    rows: dict[str, int],
    vectors: np.ndarray,
    threshold: float,
) -> list[dict[str, Any]]:
    """Each output triple with its best source triple (largest smallest-element cosine) and whether it matches."""
    if not found:
        return []
    if against:
        # (output triples, source triples): the smallest of the three element cosines
        weakest = np.min(
            [vectors[[rows[t[k]] for t in found]] @ vectors[[rows[t[k]] for t in against]].T for k in (1, 2, 3)], axis=0
        )
        best = weakest.argmax(axis=1)
    matches = []
    for i, (sentence_index, subject, relation, obj) in enumerate(found):
        similarity = float(weakest[i, best[i]]) if against else float("nan")
        source = sources[against[best[i]][0]] if against else None
        matches.append(
            {
                "sentence_index": sentence_index,
                "subject": subject,
                "relation": relation,
                "object": obj,
                "matched": bool(similarity > threshold),  # False for NaN: no source triple
                "similarity": similarity,  # smallest element cosine with the best source triple
                "best_source_sentence": against[best[i]][0] if against else None,
                "source_start": source.start if source else None,
                "source_end": source.end if source else None,
            }
        )
    return matches

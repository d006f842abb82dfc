"""FRANK's BERTScore baseline: BERTScore precision of the output against the source ("BertScore P Art").

No idf, no baseline rescaling (as FRANK). bert-score works offline here: its tokenizer, model (an
encoder folder cut to an explicit `num_layers`: the packaged MiniLM by default, `mpnet` the
packaged all-mpnet-base-v2 unpacked by rule `unpack_mpnet`) and embedding function do the
encoding; the greedy matching (each candidate token's best cosine, averaged) is factlab's few
lines, so that batches can be sorted by length (bert-score pads every batch of a call to its
longest text, a 512-piece source among short sentences) and so that `chunk` can pool chunks per
token; the tests check it equals `bert_score.BERTScorer.score`. Deviation: FRANK used
bert-score's default English model (roberta-large, not available offline), so values differ
(Spearman with FRANK's released scores is measured in the tests). Long sources (`long_source`):
`truncate` (default) is FRANK's behaviour, bert-score cutting the source to 510 word pieces plus
[CLS]/[SEP], here counted (`references_cut`, `reference_pieces_cut`); `chunk` packs whole source
sentences into chunks of at most 510 word pieces and gives each output token its best cosine
over the tokens of all chunks, so nothing is lost (bert-score's own multi-reference mode takes
the max per example, not per token). Support of an output sentence: its BERTScore precision as a
candidate of its own; no best source sentence (token matches scatter).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd
from tqdm import tqdm

from factlab.errors import ConfigError
from factlab.runtime import encoder_path, select_device
from factlab.score.baseline_frame import Owners, Scored, sentence_detail
from factlab.score.sentence_encoder import BatchSettings, batched
from factlab.text.chunking import pack_sentences
from factlab.text.sentences import Sentence

if TYPE_CHECKING:  # torch loads inside the functions that encode: importing the settings never needs it
    import torch

LOG = logging.getLogger(__name__)
LONG_SOURCE_POLICIES = ("truncate", "chunk")


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

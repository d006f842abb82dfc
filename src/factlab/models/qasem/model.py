"""The network of factlab's QASem parser, on the all-MiniLM-L6-v2 encoder.

Encoder input rows are "[CLS] sentence word pieces [SEP]"; two modes (`predicate_marker`):
- sentence mode (default): one row per sentence serves predicate detection and all of its
  predicates; the encoder does not know which predicate is meant, the argument head does;
- marker mode: one row per predicate, whose word pieces get token type 1, followed by a second
  segment with the verb the questions use ("[SEP] orientate [SEP]", type 1) — the
  predicate-indicator input of BERT SRL — plus unmarked rows for detection. It costs one encoder
  pass per predicate instead of per sentence.
Heads: a linear layer tags each word (its first word piece) none / verbal / nominal predicate.
Per predicate, each word's state is combined with the predicate's (projections of h_w, h_p and
h_w * h_p, a clipped relative-distance embedding and a verbal/nominal embedding), a small
transformer contextualises them, and a linear layer tags B/I/O: the predicate's answer spans
(gold spans of one predicate never overlap). Per argument span, the span's start, end and mean
states and the predicate's encoder state give one of the template vocabulary's classes
(factlab.models.qasem.templates): the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from factlab.models.qasem.data import IGNORE

BIO_O, BIO_B, BIO_I = 0, 1, 2
KIND_VERBAL, KIND_NOMINAL = 0, 1


@dataclass(frozen=True)
class NetworkConfig:
    n_templates: int
    encoder_layers: int = 6
    head_dim: int = 256
    head_layers: int = 2
    head_heads: int = 4
    max_distance: int = 32
    dropout: float = 0.1
    max_seq_len: int = 128
    predicate_marker: bool = False  # marker mode (see the module docstring)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NetworkConfig:
        return cls(**data)


@dataclass
class EncodedSentence:
    input_ids: list[int]  # [CLS] pieces [SEP]
    word_pieces: list[int]  # per token: its first word piece, -1 when it has none (truncated, or no piece)
    word_piece_ends: list[int]  # per token: the piece after its last one, -1 when it has none


def encode_sentences(tokenizer: Any, sentences: Sequence[Sequence[str]], max_seq_len: int) -> list[EncodedSentence]:
    """Word pieces of pre-tokenised sentences, cut at `max_seq_len` (tokens past it get -1)."""
    if not sentences:
        return []
    encoding = tokenizer(
        [list(tokens) for tokens in sentences], is_split_into_words=True, truncation=True, max_length=max_seq_len
    )
    encoded = []
    for number, tokens in enumerate(sentences):
        first: dict[int, int] = {}
        end: dict[int, int] = {}
        for position, word in enumerate(encoding.word_ids(number)):
            if word is not None:
                first.setdefault(word, position)
                end[word] = position + 1
        words = range(len(tokens))
        encoded.append(
            EncodedSentence(encoding["input_ids"][number], [first.get(w, -1) for w in words], [end.get(w, -1) for w in words])
        )
    return encoded


@dataclass
class PredicateTarget:
    """A predicate of a row; `spans`/`templates` are training targets (empty at inference)."""

    index: int
    kind: int  # KIND_VERBAL or KIND_NOMINAL
    spans: list[tuple[int, int]] = field(default_factory=list)
    templates: list[int] = field(default_factory=list)  # per span: template class or IGNORE


@dataclass
class Row:
    """One encoder input: a detection row (no predicate) or an argument row (one predicate)."""

    input_ids: list[int]
    token_type_ids: list[int]
    word_pieces: list[int]
    detection: list[int] | None = None  # per word: detection label or IGNORE; None = no labels
    predicates: list[PredicateTarget] = field(default_factory=list)


def sentence_row(
    encoded: EncodedSentence, detection: Sequence[int] | None = None, predicates: Sequence[PredicateTarget] = ()
) -> Row:
    """The sentence as is: detection labels and, in sentence mode, all its predicates."""
    labels = None if detection is None else list(detection)
    return Row(list(encoded.input_ids), [0] * len(encoded.input_ids), encoded.word_pieces, labels, list(predicates))


def argument_row(encoded: EncodedSentence, target: PredicateTarget, verb_pieces: Sequence[int], sep_id: int) -> Row:
    """The sentence with the predicate's pieces typed 1, then "verb pieces [SEP]" typed 1."""
    start, end = encoded.word_pieces[target.index], encoded.word_piece_ends[target.index]
    if start < 0:
        raise ValueError(f"predicate {target.index} has no word piece (cut by max_seq_len): leave it out first")
    types = [0] * len(encoded.input_ids)
    types[start:end] = [1] * (end - start)
    ids = [*encoded.input_ids, *verb_pieces, sep_id]
    return Row(ids, types + [1] * (len(verb_pieces) + 1), encoded.word_pieces, None, [target])


@dataclass
class Batch:
    input_ids: torch.Tensor  # (B, T)
    attention_mask: torch.Tensor  # (B, T)
    token_type_ids: torch.Tensor  # (B, T)
    word_pieces: torch.Tensor  # (B, W) first piece of each word (0 where none)
    word_mask: torch.Tensor  # (B, W) the word has a piece
    detection: torch.Tensor  # (B, W) detection labels or IGNORE
    pred_sentence: torch.Tensor  # (P,) row of each predicate in the batch
    pred_index: torch.Tensor  # (P,)
    pred_kind: torch.Tensor  # (P,)
    bio: torch.Tensor  # (P, W) B/I/O labels or IGNORE
    span_pred: torch.Tensor  # (S,) predicate (row of P) of each gold span
    span_start: torch.Tensor  # (S,)
    span_end: torch.Tensor  # (S,) exclusive
    span_template: torch.Tensor  # (S,)

    def to(self, device: torch.device) -> Batch:
        return Batch(**{name: value.to(device) for name, value in vars(self).items()})


def make_batch(rows: Sequence[Row], pad_id: int = 0) -> Batch:
    """Tensors for a batch of rows (predicates on pieceless words must be left out before)."""
    n_rows = len(rows)
    n_pieces = max(len(row.input_ids) for row in rows)
    n_words = max(1, max(len(row.word_pieces) for row in rows))
    input_ids = torch.full((n_rows, n_pieces), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((n_rows, n_pieces), dtype=torch.long)
    token_type_ids = torch.zeros((n_rows, n_pieces), dtype=torch.long)
    word_pieces = torch.zeros((n_rows, n_words), dtype=torch.long)
    word_mask = torch.zeros((n_rows, n_words), dtype=torch.bool)
    detection_labels = torch.full((n_rows, n_words), IGNORE, dtype=torch.long)
    for number, row in enumerate(rows):
        input_ids[number, : len(row.input_ids)] = torch.tensor(row.input_ids)
        attention_mask[number, : len(row.input_ids)] = 1
        token_type_ids[number, : len(row.token_type_ids)] = torch.tensor(row.token_type_ids)
        pieces = torch.tensor(row.word_pieces, dtype=torch.long)
        if len(pieces):
            word_mask[number, : len(pieces)] = pieces >= 0
            word_pieces[number, : len(pieces)] = pieces.clamp(min=0)
        if row.detection is not None and len(row.detection):
            labels = torch.tensor(row.detection, dtype=torch.long)
            detection_labels[number, : len(labels)] = torch.where(pieces >= 0, labels, IGNORE)
    flat = [(number, target) for number, row in enumerate(rows) for target in row.predicates]
    bio = torch.full((len(flat), n_words), IGNORE, dtype=torch.long)
    spans: list[tuple[int, int, int, int]] = []
    for position, (number, target) in enumerate(flat):
        bio[position] = torch.where(word_mask[number], BIO_O, IGNORE)
        for (start, end), template in zip(target.spans, target.templates, strict=True):
            bio[position, start] = BIO_B
            bio[position, start + 1 : end] = BIO_I
            spans.append((position, start, end, template))
        bio[position] = torch.where(word_mask[number], bio[position], IGNORE)  # a word without pieces has no state
    span_columns = list(zip(*spans, strict=True)) if spans else [(), (), (), ()]
    return Batch(
        input_ids=input_ids,
        attention_mask=attention_mask,
        token_type_ids=token_type_ids,
        word_pieces=word_pieces,
        word_mask=word_mask,
        detection=detection_labels,
        pred_sentence=torch.tensor([number for number, _ in flat], dtype=torch.long),
        pred_index=torch.tensor([target.index for _, target in flat], dtype=torch.long),
        pred_kind=torch.tensor([target.kind for _, target in flat], dtype=torch.long),
        bio=bio,
        span_pred=torch.tensor(span_columns[0], dtype=torch.long),
        span_start=torch.tensor(span_columns[1], dtype=torch.long),
        span_end=torch.tensor(span_columns[2], dtype=torch.long),
        span_template=torch.tensor(span_columns[3], dtype=torch.long),
    )


class QASemNetwork(nn.Module):
    def __init__(self, encoder: nn.Module, config: NetworkConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        dim = config.head_dim
        self.dropout = nn.Dropout(config.dropout)
        self.detect = nn.Linear(hidden, 3)
        self.token_proj = nn.Linear(hidden, dim)
        self.predicate_proj = nn.Linear(hidden, dim)
        self.product_proj = nn.Linear(hidden, dim)
        self.distance = nn.Embedding(2 * config.max_distance + 1, dim)
        self.kind = nn.Embedding(2, dim)
        layer = nn.TransformerEncoderLayer(dim, config.head_heads, 2 * dim, config.dropout, batch_first=True, norm_first=True)
        self.context = nn.TransformerEncoder(layer, config.head_layers, enable_nested_tensor=False)
        self.context_norm = nn.LayerNorm(dim)
        self.bio = nn.Linear(dim, 3)
        self.template = nn.Sequential(
            nn.Linear(3 * dim + hidden, 2 * dim), nn.GELU(), nn.Dropout(config.dropout), nn.Linear(2 * dim, config.n_templates)
        )

    def word_states(self, batch: Batch) -> torch.Tensor:
        """(B, W, hidden): the encoder state of each word's first piece."""
        pieces = self.encoder(
            input_ids=batch.input_ids, attention_mask=batch.attention_mask, token_type_ids=batch.token_type_ids
        ).last_hidden_state
        index = batch.word_pieces.unsqueeze(-1).expand(-1, -1, pieces.size(-1))
        return self.dropout(torch.gather(pieces, 1, index))

    def detection_logits(self, words: torch.Tensor) -> torch.Tensor:
        return self.detect(words)

    def argument_states(self, words: torch.Tensor, batch: Batch) -> torch.Tensor:
        """(P, W, dim): each word's state relative to each predicate."""
        sentence_words = words[batch.pred_sentence]
        rows = torch.arange(len(batch.pred_index), device=words.device)
        predicate = sentence_words[rows, batch.pred_index]
        positions = torch.arange(words.size(1), device=words.device).unsqueeze(0)
        offset = (positions - batch.pred_index.unsqueeze(1)).clamp(-self.config.max_distance, self.config.max_distance)
        mixed = (
            self.token_proj(sentence_words)
            + self.predicate_proj(predicate).unsqueeze(1)
            + self.product_proj(sentence_words * predicate.unsqueeze(1))
            + self.distance(offset + self.config.max_distance)
            + self.kind(batch.pred_kind).unsqueeze(1)
        )
        padding = ~batch.word_mask[batch.pred_sentence]
        return self.context_norm(self.context(mixed, src_key_padding_mask=padding))

    def template_logits(
        self,
        states: torch.Tensor,
        words: torch.Tensor,
        batch: Batch,
        span_pred: torch.Tensor,
        start: torch.Tensor,
        end: torch.Tensor,
    ) -> torch.Tensor:
        """(S, n_templates) for spans [start, end) of predicates `span_pred` (rows of `states`)."""
        span_states = states[span_pred]
        rows = torch.arange(len(span_pred), device=states.device)
        cumulative = F.pad(span_states.cumsum(1), (0, 0, 1, 0))
        mean = (cumulative[rows, end] - cumulative[rows, start]) / (end - start).unsqueeze(1).to(states.dtype)
        predicate = words[batch.pred_sentence[span_pred], batch.pred_index[span_pred]]
        features = torch.cat([span_states[rows, start], span_states[rows, end - 1], mean, predicate], dim=-1)
        return self.template(features)

    def losses(self, batch: Batch) -> dict[str, torch.Tensor]:
        words = self.word_states(batch)
        zero = words.sum() * 0.0
        losses = {"detection": masked_cross_entropy(self.detection_logits(words), batch.detection, zero)}
        if len(batch.pred_index):
            states = self.argument_states(words, batch)
            losses["arguments"] = masked_cross_entropy(self.bio(states), batch.bio, zero)
        else:
            losses["arguments"] = zero
        if len(batch.span_pred):
            logits = self.template_logits(states, words, batch, batch.span_pred, batch.span_start, batch.span_end)
            losses["templates"] = masked_cross_entropy(logits, batch.span_template, zero)
        else:
            losses["templates"] = zero
        return losses


def masked_cross_entropy(logits: torch.Tensor, labels: torch.Tensor, zero: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over labelled positions; 0 (keeping the graph) when none is labelled."""
    flat_labels = labels.reshape(-1)
    if not bool((flat_labels != IGNORE).any()):
        return zero
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), flat_labels, ignore_index=IGNORE)


def bio_spans(tags: Sequence[int]) -> list[tuple[int, int]]:
    """[start, end) spans of a B/I/O sequence; an I after O opens a span (as a B would)."""
    spans = []
    start = None
    for position, tag in enumerate([*tags, BIO_O]):
        if tag == BIO_B or (tag == BIO_I and start is None) or tag == BIO_O:
            if start is not None:
                spans.append((start, position))
                start = None
            if tag in (BIO_B, BIO_I):
                start = position
    return spans


def choose_templates(logits: torch.Tensor, role_matrix: torch.Tensor) -> torch.Tensor:
    """Per span: the most probable role (summing its templates' probabilities), then that role's
    most probable template. Labelled matching judges the role, so the role decision uses all of
    its probability mass rather than one template's. role_matrix: (n_templates, n_roles) 0/1."""
    probabilities = logits.softmax(-1)
    best_role = (probabilities @ role_matrix).argmax(-1)
    in_role = role_matrix[:, best_role].T  # (S, n_templates)
    return (probabilities * in_role).argmax(-1)

"""factlab's own QASem parser: sentences -> predicates -> QA-SRL / QANom question-answer pairs.

`FactlabQASemParser` implements the `QASemParser` protocol (types.py). Per sentence: spaCy
analysis (tags, lemmas, parse), then (model.py)
- predicates: given by the caller, or detected on one MiniLM pass of the sentence — a word the
  network tags "verbal", or a common noun it tags "nominal" (QANom's candidates are common nouns);
- arguments: another pass per sentence (sentence mode) or per predicate (marker mode); B/I/O
  word probabilities per predicate, decoded into spans with per-kind settings (`decoding`:
  biases, a span-confidence floor, no stop-word-only spans; decoding.py), tuned on validation
  data after training;
- questions: per span, the template class chosen role-first (model.choose_templates), rendered
  with the predicate's verb: a verb's lemma (analysis.token_verb_lemma), an event noun's verb
  form (given, else QANom's lexicon, else a suffix rule);
- copular QAs from the parse (copular.py), unless switched off.
Tokens past the encoder's `max_seq_len` word pieces get no arguments: every such word and
predicate is counted in `counts` (reported by the commands), never dropped silently.

A trained parser is a folder: `model.safetensors` (all weights), `config.json` (network,
decoding settings and training settings), `templates.json` (templates.TemplateVocabulary), `noun_verbs.json` (event noun
-> verb form, from QANom's training split).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from spacy.tokens import Doc

from factlab.batching import length_batches
from factlab.errors import DataError, FactlabError
from factlab.io import atomic_path, write_json
from factlab.models.qasem.analysis import analyse, is_content_word, is_noun_candidate, noun_verb_form, token_verb_lemma
from factlab.models.qasem.copular import copular_qas
from factlab.models.qasem.decoding import SpanDecoding, TaggedPredicate, decode_spans
from factlab.models.qasem.model import (
    BIO_O,
    KIND_NOMINAL,
    KIND_VERBAL,
    Batch,
    EncodedSentence,
    NetworkConfig,
    PredicateTarget,
    QASemNetwork,
    Row,
    argument_row,
    choose_templates,
    encode_sentences,
    make_batch,
    sentence_row,
)
from factlab.models.qasem.templates import TemplateVocabulary, render_question, semantic_role
from factlab.models.qasem.types import Predicate, QAPair, SentenceParse
from factlab.runtime import load_encoder, load_tokenizer, select_device

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
TEMPLATES_FILE = "templates.json"
NOUN_VERBS_FILE = "noun_verbs.json"
DETECT_VERBAL_CLASS, DETECT_NOMINAL_CLASS = 1, 2
DECODING_KINDS = {"verbal": KIND_VERBAL, "nominal": KIND_NOMINAL}
COUNT_KEYS = ("sentences", "predicates", "predicates_truncated", "words_truncated", "qas", "copular_qas")


def checked_sentences(sentences: Sequence[Sequence[str]]) -> list[list[str]]:
    token_lists = []
    for number, tokens in enumerate(sentences):
        token_list = [str(token) for token in tokens]
        if not token_list or any(not token or any(char.isspace() for char in token) for token in token_list):
            raise DataError(
                "a sentence must be a non-empty list of non-empty tokens without spaces",
                record=f"sentence {number}",
                field="tokens",
            )
        token_lists.append(token_list)
    return token_lists


class FactlabQASemParser:
    def __init__(
        self,
        network: QASemNetwork,
        vocabulary: TemplateVocabulary,
        noun_verbs: Mapping[str, str],
        device: str = "auto",
        batch_size: int = 32,
        copular: bool = True,
    ) -> None:
        if batch_size < 1:
            raise FactlabError("batch_size must be positive")
        if network.config.n_templates != len(vocabulary):
            raise FactlabError(f"network predicts {network.config.n_templates} templates, vocabulary has {len(vocabulary)}")
        self.device = select_device(device)
        self.network = network.to(self.device)
        self.vocabulary = vocabulary
        self.noun_verbs = dict(noun_verbs)
        self.batch_size = batch_size
        self.copular = copular
        self.tokenizer = load_tokenizer()
        roles = vocabulary.roles()
        self.role_names = sorted(set(roles))
        matrix = torch.zeros((len(roles), len(self.role_names)))
        for number, role in enumerate(roles):
            matrix[number, self.role_names.index(role)] = 1.0
        self.role_matrix = matrix.to(self.device)
        self.counts: dict[str, int] = dict.fromkeys(COUNT_KEYS, 0)
        self._verb_pieces: dict[str, list[int]] = {}
        # Per predicate kind; tuned on validation data after training (train.py); default = plain argmax.
        self.decoding = {KIND_VERBAL: SpanDecoding(), KIND_NOMINAL: SpanDecoding()}

    # ---- persistence -------------------------------------------------------------------
    @classmethod
    def load(cls, model_dir: str | Path, device: str = "auto", batch_size: int = 32, copular: bool = True) -> FactlabQASemParser:
        folder = Path(model_dir)
        missing = [name for name in (WEIGHTS_FILE, CONFIG_FILE, TEMPLATES_FILE, NOUN_VERBS_FILE) if not (folder / name).is_file()]
        if missing:
            raise FactlabError(f"{folder} is not a trained QASem parser: it lacks {missing}")
        config = json.loads((folder / CONFIG_FILE).read_text())
        network_config = NetworkConfig.from_json(config["network"])
        network = QASemNetwork(load_encoder(pretrained=False, layers=network_config.encoder_layers), network_config)
        network.load_state_dict(load_file(str(folder / WEIGHTS_FILE)))
        vocabulary = TemplateVocabulary.from_json(json.loads((folder / TEMPLATES_FILE).read_text()))
        noun_verbs = json.loads((folder / NOUN_VERBS_FILE).read_text())
        parser = cls(network, vocabulary, noun_verbs, device=device, batch_size=batch_size, copular=copular)
        decoding = config.get("decoding", {})
        for name, kind in DECODING_KINDS.items():
            if name in decoding:
                parser.decoding[kind] = SpanDecoding.from_json(decoding[name])
            elif f"argument_bias_{name}" in decoding:  # parsers saved before span decoding had only this bias
                parser.decoding[kind] = SpanDecoding(outside_bias=float(decoding[f"argument_bias_{name}"]))
        return parser

    def save(self, model_dir: str | Path, settings: Mapping[str, Any]) -> None:
        folder = Path(model_dir)
        state = {name: tensor.detach().cpu().contiguous() for name, tensor in self.network.state_dict().items()}
        with atomic_path(folder / WEIGHTS_FILE) as tmp:
            save_file(state, str(tmp))
        decoding = {name: self.decoding[kind].to_json() for name, kind in DECODING_KINDS.items()}
        write_json(
            {"network": self.network.config.to_json(), "decoding": decoding, "settings": dict(settings)}, folder / CONFIG_FILE
        )
        write_json(self.vocabulary.to_json(), folder / TEMPLATES_FILE)
        write_json(self.noun_verbs, folder / NOUN_VERBS_FILE)

    def reset_counts(self) -> None:
        self.counts = dict.fromkeys(COUNT_KEYS, 0)

    # ---- parsing -----------------------------------------------------------------------
    def verb_pieces(self, verb_form: str) -> list[int]:
        if verb_form not in self._verb_pieces:
            self._verb_pieces[verb_form] = self.tokenizer(verb_form, add_special_tokens=False)["input_ids"]
        return self._verb_pieces[verb_form]

    def detect_predicates(self, sentences: Sequence[Sequence[str]]) -> list[list[Predicate]]:
        """Predicates only (a `PredicateDetector` for the hub adapter)."""
        token_lists = checked_sentences(sentences)
        docs = analyse(token_lists)
        encoded = encode_sentences(self.tokenizer, token_lists, self.network.config.max_seq_len)
        return self.detect_encoded(encoded, docs)

    def detect_encoded(self, encoded: list[EncodedSentence], docs: list[Doc]) -> list[list[Predicate]]:
        found: list[list[Predicate]] = [[] for _ in encoded]
        with torch.inference_mode():
            self.network.eval()
            for rows in length_batches([len(item.input_ids) for item in encoded], max_rows=self.batch_size):
                batch = make_batch([sentence_row(encoded[row]) for row in rows]).to(self.device)
                labels = self.network.detection_logits(self.network.word_states(batch)).argmax(-1).tolist()
                for local, row in enumerate(rows):
                    found[row] = self.detected(labels[local], batch.word_mask[local].tolist(), docs[row])
        return found

    def parse(
        self, sentences: Sequence[Sequence[str]], predicates: Sequence[Sequence[Predicate]] | None = None
    ) -> list[SentenceParse]:
        """One SentenceParse per sentence; `predicates` per sentence, else detected."""
        token_lists, docs, content, encoded, kept = self.prepare(sentences, predicates)
        parses = [SentenceParse(tokens=tokens) for tokens in token_lists]
        with torch.inference_mode():
            self.network.eval()
            for items, batch in self.argument_batches(encoded, kept):
                self.parse_batch(items, batch, parses, content)
        for doc, parse in zip(docs, parses, strict=True):
            parse.qas.sort(key=lambda qa: (qa.predicate.index, qa.answer_start))  # batches come in length order
            if self.copular:
                extra = copular_qas(doc)
                parse.qas.extend(extra)
                self.counts["copular_qas"] += len(extra)
        self.counts["sentences"] += len(token_lists)
        return parses

    def tag_predicates(
        self, sentence_ids: Sequence[str], sentences: Sequence[Sequence[str]], predicates: Sequence[Sequence[Predicate]]
    ) -> dict[int, list[TaggedPredicate]]:
        """B/I/O word probabilities of the given predicates, per predicate kind, undecoded (for
        tuning the decoding: the network runs once, every setting decodes the same output)."""
        if len(sentence_ids) != len(sentences):
            raise DataError(f"{len(sentence_ids)} sentence ids for {len(sentences)} sentences", field="sentence_ids")
        _, docs, content, encoded, kept = self.prepare(sentences, predicates)
        tagged: dict[int, list[TaggedPredicate]] = {KIND_VERBAL: [], KIND_NOMINAL: []}
        with torch.inference_mode():
            self.network.eval()
            for items, batch in self.argument_batches(encoded, kept):
                probabilities = self.word_probabilities(batch, [len(docs[sentence]) for sentence, _ in items])
                for (sentence, predicate), word_probabilities in zip(items, probabilities, strict=True):
                    key = (sentence_ids[sentence], predicate.index)
                    tagged[self.kind(predicate)].append(TaggedPredicate(key, word_probabilities, content[sentence]))
        return tagged

    def prepare(
        self, sentences: Sequence[Sequence[str]], predicates: Sequence[Sequence[Predicate]] | None
    ) -> tuple[list[list[str]], list[Doc], list[list[bool]], list[EncodedSentence], list[list[Predicate]]]:
        """Tokens, spaCy docs, content-word flags (decoding.py), encodings and the usable predicates
        (given, else detected) per sentence; predicates past `max_seq_len` are counted and left out."""
        token_lists = checked_sentences(sentences)
        if predicates is not None and len(predicates) != len(token_lists):
            raise DataError(f"{len(predicates)} predicate lists for {len(token_lists)} sentences", field="predicates")
        docs = analyse(token_lists)
        encoded = encode_sentences(self.tokenizer, token_lists, self.network.config.max_seq_len)
        if predicates is None:
            chosen = self.detect_encoded(encoded, docs)
        else:
            chosen = [[self.with_verb_form(p, doc) for p in given] for given, doc in zip(predicates, docs, strict=True)]
        kept: list[list[Predicate]] = []
        for number, candidates in enumerate(chosen):
            self.counts["words_truncated"] += sum(piece < 0 for piece in encoded[number].word_pieces)
            usable = [p for p in candidates if self.check_index(p, docs[number]) and encoded[number].word_pieces[p.index] >= 0]
            self.counts["predicates"] += len(candidates)
            self.counts["predicates_truncated"] += len(candidates) - len(usable)
            kept.append(usable)
        content = [[is_content_word(token) for token in doc] for doc in docs]
        return token_lists, docs, content, encoded, kept

    def argument_batches(
        self, encoded: list[EncodedSentence], kept: list[list[Predicate]]
    ) -> Iterator[tuple[list[tuple[int, Predicate]], Batch]]:
        """Length-batched encoder rows for the predicates in `kept`, each batch on the device with
        its (sentence, predicate) items in the order of make_batch's predicates."""
        rows: list[Row] = []
        row_items: list[list[tuple[int, Predicate]]] = []
        for number, predicates_here in enumerate(kept):
            if self.network.config.predicate_marker:
                for predicate in predicates_here:
                    rows.append(self.argument_input(encoded[number], predicate))
                    row_items.append([(number, predicate)])
            elif predicates_here:
                rows.append(sentence_row(encoded[number], None, [self.target(p) for p in predicates_here]))
                row_items.append([(number, p) for p in predicates_here])
        for batch_rows in length_batches([len(row.input_ids) for row in rows], max_rows=self.batch_size):
            items = [item for i in batch_rows for item in row_items[i]]
            yield items, make_batch([rows[i] for i in batch_rows]).to(self.device)

    def word_probabilities(self, batch: Batch, lengths: Sequence[int], states: torch.Tensor | None = None) -> list[np.ndarray]:
        """Per predicate of the batch: (n_words, 3) B/I/O probabilities; a word without pieces
        (truncated) is certainly O."""
        if states is None:
            states = self.network.argument_states(self.network.word_states(batch), batch)
        probabilities = self.network.bio(states).float().softmax(-1).cpu().numpy()
        word_mask = batch.word_mask.cpu().numpy()
        outside = np.eye(3, dtype=probabilities.dtype)[BIO_O]
        result = []
        for number, length in enumerate(lengths):
            row = probabilities[number, :length].copy()
            row[~word_mask[int(batch.pred_sentence[number]), :length]] = outside
            result.append(row)
        return result

    @staticmethod
    def kind(predicate: Predicate) -> int:
        return KIND_VERBAL if predicate.is_verbal else KIND_NOMINAL

    @classmethod
    def target(cls, predicate: Predicate) -> PredicateTarget:
        return PredicateTarget(predicate.index, cls.kind(predicate))

    def argument_input(self, encoded: EncodedSentence, predicate: Predicate) -> Row:
        return argument_row(encoded, self.target(predicate), self.verb_pieces(predicate.verb_form), self.tokenizer.sep_token_id)

    def parse_batch(
        self, items: list[tuple[int, Predicate]], batch: Batch, parses: list[SentenceParse], content: list[list[bool]]
    ) -> None:
        """Arguments and questions for the predicates of `batch`; `items` = (sentence, predicate) of
        each; `content[sentence]`: which words are content words (decoding.py)."""
        words = self.network.word_states(batch)
        states = self.network.argument_states(words, batch)
        probabilities = self.word_probabilities(batch, [len(parses[sentence].tokens) for sentence, _ in items], states)
        spans = []
        for number, ((sentence, predicate), word_probabilities) in enumerate(zip(items, probabilities, strict=True)):
            decoding = self.decoding[self.kind(predicate)]
            spans.extend((number, start, end) for start, end in decode_spans(word_probabilities, content[sentence], decoding))
        if not spans:
            return
        span_pred, starts, ends = (torch.tensor(column, device=self.device) for column in zip(*spans, strict=True))
        logits = self.network.template_logits(states, words, batch, span_pred, starts, ends)
        templates = choose_templates(logits, self.role_matrix).tolist()
        for (number, start, end), template in zip(spans, templates, strict=True):
            sentence, predicate = items[number]
            slots = self.vocabulary.slots(template)
            tokens = parses[sentence].tokens
            question = render_question(slots, predicate.verb_form)
            parses[sentence].qas.append(
                QAPair(
                    predicate,
                    question,
                    " ".join(tokens[start:end]),
                    start,
                    end,
                    slots=slots,
                    role=semantic_role(slots),
                    source="model",
                )
            )
            self.counts["qas"] += 1

    def detected(self, labels: list[int], word_mask: list[bool], doc: Doc) -> list[Predicate]:
        found = []
        for index, token in enumerate(doc):
            if index >= len(labels) or not word_mask[index]:
                continue
            if labels[index] == DETECT_VERBAL_CLASS:
                found.append(Predicate(index, token.text, True, token_verb_lemma(token)))
            elif labels[index] == DETECT_NOMINAL_CLASS and is_noun_candidate(token):
                found.append(Predicate(index, token.text, False, noun_verb_form(token, self.noun_verbs)))
        return found

    def with_verb_form(self, predicate: Predicate, doc: Doc) -> Predicate:
        if predicate.verb_form or not 0 <= predicate.index < len(doc):
            return predicate
        token = doc[predicate.index]
        verb = token_verb_lemma(token) if predicate.is_verbal else noun_verb_form(token, self.noun_verbs)
        return Predicate(predicate.index, predicate.text, predicate.is_verbal, verb)

    @staticmethod
    def check_index(predicate: Predicate, doc: Doc) -> bool:
        if not 0 <= predicate.index < len(doc):
            raise DataError(f"predicate index {predicate.index} outside a sentence of {len(doc)} tokens", field="predicates")
        return True

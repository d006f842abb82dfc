"""Adapter for the published QASem seq2seq parsers, so a user online can swap factlab's own parser
for a hub model (or a local copy of one) by a parameter.

Two published input/output formats, reproduced from their reference code:

- `qasem_parser` — `cattana/flan-t5-{large,xl}-qasem-joint-tokenized`, the parser of
  QASemConsistency (reference: `T2TQasemArgumentParser` in plroit/qasem_parser,
  `argument_detection.py`). One input per predicate, the tokens joined by spaces and the predicate
  wrapped without spaces: `Generate QA pairs: The fox <extra_id_0>jumped<extra_id_1> over the fence .`
  Output: QA pairs separated by `<extra_id_2>`; in each, the question runs to the first "?", the
  answers follow, separated by `<extra_id_3>`: `who jumped? The fox<extra_id_2>where did someone
  jump? over the fence`.
- `qanom_seq2seq` — `kleinay/qanom-seq2seq-model-{joint,baseline}`, the older QASem package models
  (reference: `QASRL_Pipeline` in the model repo's `pipeline.py`). The qasem_parser authors note it
  was "trained with a different format": the predicate is marked by `<extra_id_10>` (or per type
  `<extra_id_11>`/`<extra_id_12>`), the verb form is appended after `<extra_id_1>`, and a source
  prefix comes from the model's `preprocessing_kwargs.json`. Output: pairs separated by
  `<extra_id_9>`, question and answers by `<extra_id_7>`, answers by `<extra_id_3>`; questions keep
  the QA-SRL slot placeholders ("who _ _ researched something _ _ ?"), dropped here.

Answers are text; they are mapped back to token spans as the reference does: a match that ignores
whitespace differences at token boundaries ("Muir's" finds `Muir 's`), case-sensitive first, then
case-insensitive, the occurrence closest to the predicate winning. The reference drops answers it
cannot find, and output that does not parse, silently; here every such drop is counted in
`HubQASemParser.counts`, for the pipeline to report.

Predicates: the hub models only generate arguments for a given predicate. `parse` takes them from
the caller (`predicates=`), from an injected detector (e.g. factlab's trained one), or by default
from `detect_predicates`: spaCy verbs (not modals, not "be": as qasem_parser does) plus event nouns
found by a simple rule — a common noun whose lemma, minus a derivational suffix (-ation, -ment,
-ance, -al, -ing …), is a verb in spaCy's lemmatizer verb index ("preparation" -> "prepare"). The
QASem package uses a trained nominalization classifier instead; this rule is precise but misses
zero-derived nouns ("attack", "damage").
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factlab.errors import DataError, FactlabError
from factlab.models.qasem.lexicon import COMMON_NOUN_TAGS, event_noun_verb
from factlab.models.qasem.types import Predicate, QAPair, SentenceParse
from factlab.runtime import select_device

QASEM_PARSER_STYLE = "qasem_parser"
QANOM_SEQ2SEQ_STYLE = "qanom_seq2seq"
STYLES = (QASEM_PARSER_STYLE, QANOM_SEQ2SEQ_STYLE)
DEFAULT_MODEL = "cattana/flan-t5-large-qasem-joint-tokenized"

# qasem_parser format (plroit/qasem_parser T2TQasemArgumentParser).
PROMPT_PREFIX = "Generate QA pairs:"
PREDICATE_START = "<extra_id_0>"
PREDICATE_END = "<extra_id_1>"
QA_SEPARATOR = "<extra_id_2>"
ANSWER_SEPARATOR = "<extra_id_3>"

# qanom_seq2seq format (kleinay/qanom-seq2seq-model-* pipeline.py, T5 markers).
S2S_VERB_FORM_SEPARATOR = "<extra_id_1>"
S2S_ANSWER_SEPARATOR = "<extra_id_3>"
S2S_QUESTION_ANSWER_SEPARATOR = "<extra_id_7>"
S2S_PAIR_SEPARATOR = "<extra_id_9>"
S2S_PREDICATE_MARKERS = {"generic": "<extra_id_10>", "verbal": "<extra_id_11>", "nominal": "<extra_id_12>"}
S2S_TYPED_PREFIX = "Generate QAs for <predicate_type> QASRL: "
S2S_KWARGS_FILES = ("preprocessing_kwargs.json", "experiment_kwargs.json")

SLOT_PLACEHOLDER = "_"  # an empty QA-SRL slot in the generated question
DEFAULT_STRIP_TOKENS = ("<pad>", "</s>")

# Reference defaults: batch 32, 4 beams, max_length 256 generated tokens.
DEFAULT_BATCH_SIZE = 32
DEFAULT_NUM_BEAMS = 4
DEFAULT_MAX_NEW_TOKENS = 256

# Every counter `HubQASemParser.counts` reports (zeros included, so reports have fixed columns).
COUNT_KEYS = (
    "n_sentences",
    "n_predicates",
    "n_generations",
    "n_truncated_outputs",
    "n_empty_outputs",
    "n_malformed_outputs",
    "n_malformed_segments",
    "n_questions",
    "n_answers",
    "n_empty_answers",
    "n_answers_not_found",
    "n_qas",
)

PredicateDetector = Callable[[Sequence[Sequence[str]]], list[list[Predicate]]]


@dataclass(frozen=True)
class Seq2SeqPreprocessing:
    """The qanom_seq2seq input options a model was trained with (its preprocessing_kwargs.json)."""

    source_prefix: str | None
    predicate_marker_type: str = "generic"  # or "pred_type"
    use_bilateral_predicate_marker: bool = True
    append_verb_form: bool = True

    @classmethod
    def from_mapping(cls, kwargs: Mapping[str, Any], file: str | Path | None = None) -> Seq2SeqPreprocessing:
        # Missing keys take the reference pipeline's backward-compatible defaults.
        marker_type = kwargs.get("predicate_marker_type", "generic")
        if marker_type not in ("generic", "pred_type"):
            raise DataError(f"unknown predicate_marker_type {marker_type!r}", file=file, field="predicate_marker_type")
        return cls(
            source_prefix=kwargs.get("source_prefix"),
            predicate_marker_type=marker_type,
            use_bilateral_predicate_marker=bool(kwargs.get("use_bilateral_predicate_marker", True)),
            append_verb_form=bool(kwargs.get("append_verb_form", True)),
        )


@dataclass(frozen=True)
class ParsedGeneration:
    """One generated sequence split into (question, answers); `n_malformed` segments had no question."""

    qas: list[tuple[str, list[str]]]
    n_segments: int
    n_malformed: int


def check_style(style: str) -> str:
    if style not in STYLES:
        raise FactlabError(f"unknown hub parser format {style!r}; expected one of {STYLES}")
    return style


def predicate_type(is_verbal: bool) -> str:
    return "verbal" if is_verbal else "nominal"


def format_prompt(
    tokens: Sequence[str],
    predicate_index: int,
    style: str = QASEM_PARSER_STYLE,
    *,
    is_verbal: bool = True,
    verb_form: str | None = None,
    preprocessing: Seq2SeqPreprocessing | None = None,
) -> str:
    """The model input for one predicate of a tokenised sentence, in the given format."""
    check_style(style)
    if not 0 <= predicate_index < len(tokens):
        raise DataError(f"predicate index {predicate_index} outside a sentence of {len(tokens)} tokens", field="predicate_index")
    before, predicate, after = tokens[:predicate_index], tokens[predicate_index], tokens[predicate_index + 1 :]
    if style == QASEM_PARSER_STYLE:
        # The model was trained without spaces between the markers and the predicate.
        return " ".join([PROMPT_PREFIX, *before, f"{PREDICATE_START}{predicate}{PREDICATE_END}", *after])
    if preprocessing is None:
        raise FactlabError("the qanom_seq2seq format needs the model's preprocessing options")
    return qanom_seq2seq_prompt(" ".join(before), predicate, " ".join(after), is_verbal, verb_form, preprocessing)


def qanom_seq2seq_prompt(
    before: str, predicate: str, after: str, is_verbal: bool, verb_form: str | None, options: Seq2SeqPreprocessing
) -> str:
    # Spacing as in the reference `_preprocess_string`; T5's tokenizer collapses the doubled spaces.
    kind = predicate_type(is_verbal)
    marker = S2S_PREDICATE_MARKERS["generic" if options.predicate_marker_type == "generic" else kind]
    if options.use_bilateral_predicate_marker:
        sequence = f"{before} {marker} {predicate} {marker} {after}"
    else:
        sequence = f"{before} {marker} {predicate} {after}"
    if options.append_verb_form:
        if not verb_form:
            raise DataError(f"this model needs the verb form of predicate {predicate!r}", field="verb_form")
        sequence = f"{sequence} {S2S_VERB_FORM_SEPARATOR} {verb_form} "
    else:
        sequence = f"{sequence} "
    return qanom_seq2seq_prefix(options.source_prefix, kind) + sequence


def qanom_seq2seq_prefix(source_prefix: str | None, kind: str) -> str:
    """The reference `_get_source_prefix`, including its replacement of the whole typed template."""
    if source_prefix is None:
        return ""
    if S2S_TYPED_PREFIX not in source_prefix:
        return source_prefix
    if source_prefix == S2S_TYPED_PREFIX:
        return f"Generate QAs for {kind} QASRL: "
    return source_prefix.replace(S2S_TYPED_PREFIX, kind)


def clean_question(raw_question: str) -> str:
    """Drop empty-slot placeholders and stray spaces; the question ends in a single "?"."""
    words = [word for word in raw_question.replace("?", " ").split() if word != SLOT_PLACEHOLDER]
    return f"{' '.join(words)}?" if words else ""


def parse_generation(
    text: str, style: str = QASEM_PARSER_STYLE, strip_tokens: Iterable[str] = DEFAULT_STRIP_TOKENS
) -> ParsedGeneration:
    """Split a decoded output (special tokens kept) into (question, answers) pairs.

    Empty segments (an empty output, a trailing separator) hold nothing and are skipped; a
    non-empty segment without a question is counted in `n_malformed`. Answers are kept as
    generated, empty ones included, for the caller to count.
    """
    check_style(style)
    for token in strip_tokens:
        text = text.replace(token, "")
    pair_separator = QA_SEPARATOR if style == QASEM_PARSER_STYLE else S2S_PAIR_SEPARATOR
    segments = [segment.strip() for segment in text.split(pair_separator)]
    segments = [segment for segment in segments if segment]
    qas = []
    for segment in segments:
        if style == QASEM_PARSER_STYLE:
            raw_question, found, raw_answers = segment.partition("?")
            answer_separator = ANSWER_SEPARATOR
        else:
            raw_question, found, raw_answers = segment.partition(S2S_QUESTION_ANSWER_SEPARATOR)
            # The reference keeps the text up to a second separator only.
            raw_answers = raw_answers.split(S2S_QUESTION_ANSWER_SEPARATOR)[0]
            answer_separator = S2S_ANSWER_SEPARATOR
        question = clean_question(raw_question)
        if found and question:
            qas.append((question, [answer.strip() for answer in raw_answers.split(answer_separator)]))
    return ParsedGeneration(qas=qas, n_segments=len(segments), n_malformed=len(segments) - len(qas))


def answer_matches(tokens: Sequence[str], answer: str) -> list[tuple[int, int]]:
    """All spans [start, end) whose tokens spell `answer`, spaces in it falling between tokens only."""
    answer = answer.strip()
    if not answer:
        return []
    matches = []
    for start in range(len(tokens)):
        position = 0
        for end in range(start, len(tokens)):
            token = tokens[end]
            if not token or answer[position : position + len(token)] != token:
                break
            position += len(token)
            while position < len(answer) and answer[position].isspace():
                position += 1
            if position == len(answer):
                matches.append((start, end + 1))
                break
    return matches


def span_distance(span: tuple[int, int], index: int) -> int:
    """Tokens between a span and the predicate token (0 when the span covers it), as the reference."""
    start, end = span
    if start <= index < end:
        return 0
    return start - (index + 1) if start > index else index - end


def locate_answer(tokens: Sequence[str], answer: str, predicate_index: int | None = None) -> tuple[int, int] | None:
    """The token span of a generated answer, or None when the sentence does not contain it.

    As the reference: exact characters first, then case-insensitive; of several occurrences, the
    one nearest the predicate (the first when no predicate is given, or on ties).
    """
    matches = answer_matches(tokens, answer) or answer_matches([token.lower() for token in tokens], answer.lower())
    if not matches:
        return None
    if predicate_index is None:
        return matches[0]
    return min(matches, key=lambda span: span_distance(span, predicate_index))


def detect_predicates(sentences: Sequence[Sequence[str]]) -> list[list[Predicate]]:
    """Verbs (spaCy POS VERB, not modal, not "be") and suffix-derived event nouns, per sentence."""
    from spacy.tokens import Doc

    from factlab.runtime import load_spacy

    nlp = load_spacy(disable=("ner", "parser", "senter"))
    docs = nlp.pipe(Doc(nlp.vocab, words=list(tokens)) for tokens in sentences)
    found = []
    for doc in docs:
        predicates = []
        for token in doc:
            if token.pos_ == "VERB" and token.tag_ != "MD" and token.lemma_.lower() != "be":
                predicates.append(Predicate(token.i, token.text, True, token.lemma_.lower()))
            elif token.tag_ in COMMON_NOUN_TAGS and (verb := event_noun_verb(token.lemma_)):
                predicates.append(Predicate(token.i, token.text, False, verb))
        found.append(predicates)
    return found


def load_seq2seq_preprocessing(model_name_or_path: str) -> Seq2SeqPreprocessing:
    """The qanom_seq2seq options: a local model folder's kwargs file, else the hub repo's."""
    folder = Path(model_name_or_path)
    if folder.is_dir():
        for name in S2S_KWARGS_FILES:
            if (folder / name).is_file():
                return read_preprocessing(folder / name)
        raise FactlabError(f"{folder} has none of {S2S_KWARGS_FILES}: the qanom_seq2seq format needs one")
    from huggingface_hub import hf_hub_download

    try:
        return read_preprocessing(Path(hf_hub_download(repo_id=model_name_or_path, filename=S2S_KWARGS_FILES[0])))
    except Exception as error:  # hub errors come in many classes; the message says which
        raise FactlabError(f"cannot fetch {S2S_KWARGS_FILES[0]} of {model_name_or_path!r}: {error}") from error


def read_preprocessing(path: Path) -> Seq2SeqPreprocessing:
    try:
        kwargs = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise DataError(f"not JSON: {error}", file=path) from error
    if not isinstance(kwargs, dict):
        raise DataError("expected a JSON object", file=path)
    return Seq2SeqPreprocessing.from_mapping(kwargs, file=path)


class HubQASemParser:
    """A published seq2seq QASem parser behind factlab's `QASemParser` protocol.

    `counts` accumulates over `parse` calls (`reset_counts` clears it). Per generated answer:
    n_answers = n_qas + n_empty_answers + n_answers_not_found. Per generation, at most one of
    empty (no QA segment), malformed (some segment had no question); n_truncated_outputs hit
    `max_new_tokens` before the end token (their last QA may be cut; parsed as the reference does).
    """

    def __init__(
        self,
        model_name_or_path: str = DEFAULT_MODEL,
        device: str = "auto",
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        num_beams: int = DEFAULT_NUM_BEAMS,
        style: str = QASEM_PARSER_STYLE,
        predicate_detector: PredicateDetector | None = None,
    ) -> None:
        if batch_size < 1 or max_new_tokens < 1 or num_beams < 1:
            raise FactlabError("batch_size, max_new_tokens and num_beams must be positive")
        self.model_name_or_path = str(model_name_or_path)
        self.style = check_style(style)
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.num_beams = num_beams  # 1 = greedy
        self.device = str(select_device(device))
        self.predicate_detector = predicate_detector or detect_predicates
        self.tokenizer, self.model = load_seq2seq(self.model_name_or_path, self.device)
        self.preprocessing = load_seq2seq_preprocessing(self.model_name_or_path) if style == QANOM_SEQ2SEQ_STYLE else None
        self.check_markers()
        self.counts: dict[str, int] = {}
        self.reset_counts()

    def reset_counts(self) -> None:
        self.counts = dict.fromkeys(COUNT_KEYS, 0)

    def check_markers(self) -> None:
        """A model of the other format would silently produce nonsense: its markers must be tokens."""
        if self.style == QASEM_PARSER_STYLE:
            markers = [PREDICATE_START, PREDICATE_END, QA_SEPARATOR, ANSWER_SEPARATOR]
        else:
            markers = [
                S2S_VERB_FORM_SEPARATOR,
                S2S_ANSWER_SEPARATOR,
                S2S_QUESTION_ANSWER_SEPARATOR,
                S2S_PAIR_SEPARATOR,
                *S2S_PREDICATE_MARKERS.values(),
            ]
        unknown = [
            marker for marker in markers if self.tokenizer.convert_tokens_to_ids(marker) in (None, self.tokenizer.unk_token_id)
        ]
        if unknown:
            raise FactlabError(f"the tokenizer of {self.model_name_or_path!r} lacks the {self.style} markers {unknown}")

    def parse(
        self, sentences: Sequence[Sequence[str]], predicates: Sequence[Sequence[Predicate]] | None = None
    ) -> list[SentenceParse]:
        """One SentenceParse per sentence; `predicates` per sentence, else from the detector."""
        token_lists = [checked_tokens(tokens, number) for number, tokens in enumerate(sentences)]
        if predicates is None:
            predicates = self.predicate_detector(token_lists)
        if len(predicates) != len(token_lists):
            raise DataError(f"{len(predicates)} predicate lists for {len(token_lists)} sentences", field="predicates")
        items = [
            (number, predicate) for number, sentence_predicates in enumerate(predicates) for predicate in sentence_predicates
        ]
        prompts = [self.prompt(token_lists[number], predicate, number) for number, predicate in items]
        generations = self.generate(prompts)
        parses = [SentenceParse(tokens=tokens) for tokens in token_lists]
        for (number, predicate), (text, truncated) in zip(items, generations, strict=True):
            self.counts["n_truncated_outputs"] += truncated
            parses[number].qas.extend(self.qas_from_generation(token_lists[number], predicate, text))
        self.counts["n_sentences"] += len(token_lists)
        self.counts["n_predicates"] += len(items)
        return parses

    def prompt(self, tokens: list[str], predicate: Predicate, number: int) -> str:
        if not 0 <= predicate.index < len(tokens):
            raise DataError(
                f"predicate index {predicate.index} outside the sentence ({len(tokens)} tokens)",
                record=f"sentence {number}",
                field="predicates",
            )
        return format_prompt(
            tokens,
            predicate.index,
            self.style,
            is_verbal=predicate.is_verbal,
            verb_form=predicate.verb_form,
            preprocessing=self.preprocessing,
        )

    def generate(self, prompts: Sequence[str]) -> list[tuple[str, bool]]:
        """(decoded text with special tokens, truncated?) per prompt, in input order.

        Batches are formed longest-first so that each pads to similar lengths.
        """
        import torch

        lengths = [len(ids) for ids in self.tokenizer(list(prompts))["input_ids"]] if prompts else []
        order = sorted(range(len(prompts)), key=lambda index: -lengths[index])
        results: list[tuple[str, bool]] = [("", False)] * len(prompts)
        eos_id = self.tokenizer.eos_token_id
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start : start + self.batch_size]
                inputs = self.tokenizer([prompts[index] for index in batch], padding=True, return_tensors="pt").to(self.device)
                outputs = self.model.generate(
                    input_ids=inputs["input_ids"],
                    attention_mask=inputs["attention_mask"],
                    num_beams=self.num_beams,
                    do_sample=False,
                    max_new_tokens=self.max_new_tokens,
                ).cpu()
                texts = self.tokenizer.batch_decode(outputs, skip_special_tokens=False)
                for index, sequence, text in zip(batch, outputs, texts, strict=True):
                    results[index] = (text, not bool((sequence[1:] == eos_id).any()))
        self.counts["n_generations"] += len(prompts)
        return results

    def qas_from_generation(self, tokens: list[str], predicate: Predicate, text: str) -> list[QAPair]:
        strip = [token for token in (self.tokenizer.pad_token, self.tokenizer.eos_token) if token]
        parsed = parse_generation(text, self.style, strip)
        if parsed.n_segments == 0:
            self.counts["n_empty_outputs"] += 1
        self.counts["n_malformed_segments"] += parsed.n_malformed
        self.counts["n_malformed_outputs"] += parsed.n_malformed > 0
        qas = []
        for question, answers in parsed.qas:
            self.counts["n_questions"] += 1
            for answer in answers:
                self.counts["n_answers"] += 1
                if not answer:
                    self.counts["n_empty_answers"] += 1
                    continue
                span = locate_answer(tokens, answer, predicate.index)
                if span is None:
                    self.counts["n_answers_not_found"] += 1
                    continue
                start, end = span
                qas.append(QAPair(predicate, question, " ".join(tokens[start:end]), start, end, source="hub"))
        self.counts["n_qas"] += len(qas)
        return qas


def checked_tokens(tokens: Sequence[str], number: int) -> list[str]:
    """Tokens must be non-empty and space-free: answers are matched back onto them."""
    token_list = [str(token) for token in tokens]
    bad = [token for token in token_list if not token or any(char.isspace() for char in token)]
    if bad:
        raise DataError(f"tokens must be non-empty without spaces, got {bad[:3]!r}", record=f"sentence {number}", field="tokens")
    return token_list


def load_seq2seq(model_name_or_path: str, device: str) -> tuple[Any, Any]:
    """Tokenizer and model from a local folder (never the network) or a hub name."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    path = Path(model_name_or_path)
    local = path.is_dir()
    if not local and (path.exists() or path.is_absolute() or model_name_or_path.startswith(".") or len(path.parts) > 2):
        # A path, not an "owner/name" hub id: never ask the network for it.
        raise FactlabError(f"cannot load hub parser {model_name_or_path!r}: no such model folder")
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_name_or_path, local_files_only=local)
        model = AutoModelForSeq2SeqLM.from_pretrained(model_name_or_path, local_files_only=local)
    except OSError as error:
        offline = " (HF_HUB_OFFLINE is set: use a local copy)" if os.environ.get("HF_HUB_OFFLINE") else ""
        raise FactlabError(f"cannot load hub parser {model_name_or_path!r}{offline}: {error}") from error
    return tokenizer, model.to(device).eval()

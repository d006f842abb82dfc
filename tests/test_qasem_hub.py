"""The hub QASem parser adapter: prompt/output formats on real QA-SRL and QASemConsistency data, and
the model I/O end to end with a tiny T5 built here from a config (no download)."""

from __future__ import annotations

import json
import re
import shutil

import pandas as pd
import pytest
import torch
from tiny_t5 import build_tiny_t5

from factlab.data.registry import get_spec
from factlab.errors import DataError, FactlabError
from factlab.models.qasem.hub import (
    ANSWER_SEPARATOR,
    COUNT_KEYS,
    QA_SEPARATOR,
    QANOM_SEQ2SEQ_STYLE,
    S2S_ANSWER_SEPARATOR,
    S2S_PAIR_SEPARATOR,
    S2S_QUESTION_ANSWER_SEPARATOR,
    HubQASemParser,
    Seq2SeqPreprocessing,
    detect_predicates,
    format_prompt,
    locate_answer,
    parse_generation,
)
from factlab.models.qasem.lexicon import event_noun_verb, verb_lemmas
from factlab.models.qasem.types import Predicate, QAPair


@pytest.fixture(scope="module")
def gs(raw) -> pd.DataFrame:
    return get_spec("qasrl_gs").build(raw).frame


@pytest.fixture(scope="module")
def gs_by_key(gs) -> dict[str, list]:
    """Gold QA rows per predicate, in file order (plain tuples: pandas groups are slow to iterate)."""
    columns = ["key", "sentence_id", "tokens", "predicate_idx", "predicate", "question", "answers", "answer_ranges"]
    by_key: dict[str, list] = {}
    for row in gs[columns].itertuples(index=False):
        by_key.setdefault(row.key, []).append(row)
    return by_key


@pytest.fixture(scope="module")
def consistency_qas(raw) -> pd.DataFrame:
    return get_spec("qasem_consistency_qas").build(raw).frame


def gold_generation(rows: list) -> str:
    """A predicate's gold QAs written in the qasem_parser output format."""
    return QA_SEPARATOR.join(f"{row.question} {ANSWER_SEPARATOR.join(row.answers)}" for row in rows)


def occurrences(tokens: list[str], answer: str) -> list[tuple[int, int]]:
    """Independent oracle: token spans whose space-joined text is `answer`, by string search."""
    sentence = " ".join(tokens)
    starts, position = {}, 0
    for index, token in enumerate(tokens):
        starts[position] = index
        position += len(token) + 1
    ends = {start + len(tokens[index]): index + 1 for start, index in starts.items()}
    found = []
    for match in re.finditer(f"(?={re.escape(answer)})", sentence):
        begin, finish = match.start(), match.start() + len(answer)
        if begin in starts and finish in ends:
            found.append((starts[begin], ends[finish]))
    return found


def nearest(spans: list[tuple[int, int]], index: int) -> tuple[int, int]:
    def distance(span):
        start, end = span
        return 0 if start <= index < end else (start - index - 1 if start > index else index - end)

    return min(spans, key=distance)


def detokenize(text: str) -> str:
    """What a T5 decoder tends to write: no space before punctuation and clitics."""
    return re.sub(r" (?=[.,;:!?)%]|'s\b|n't\b|'re\b)", "", text)


# --- prompt format ---------------------------------------------------------------------------


def test_format_prompt_marks_the_predicate_without_spaces(gs):
    row = gs.iloc[0]
    tokens = list(row.tokens)
    assert tokens == ["Searches", "are", "presently", "suspended", "until", "morning", "."]
    assert format_prompt(tokens, row.predicate_idx) == (
        "Generate QA pairs: Searches are presently <extra_id_0>suspended<extra_id_1> until morning ."
    )
    assert format_prompt(tokens, 0).startswith("Generate QA pairs: <extra_id_0>Searches<extra_id_1> are")
    assert format_prompt(tokens, 6).endswith("until morning <extra_id_0>.<extra_id_1>")
    with pytest.raises(DataError, match="predicate index 7"):
        format_prompt(tokens, 7)


def test_qanom_seq2seq_prompt_reproduces_the_model_card_example():
    # kleinay/qanom-seq2seq-model-joint card: "... Luke 's <predicate> research ...", verb_form="research".
    tokens = "The student was interested in Luke 's research about sea animals .".split()
    typed = Seq2SeqPreprocessing(source_prefix="Generate QAs for <predicate_type> QASRL: ")
    prompt = format_prompt(tokens, 7, QANOM_SEQ2SEQ_STYLE, is_verbal=False, verb_form="research", preprocessing=typed)
    assert prompt == (
        "Generate QAs for nominal QASRL: The student was interested in Luke 's <extra_id_10> research "
        "<extra_id_10> about sea animals . <extra_id_1> research "
    )
    options = Seq2SeqPreprocessing(
        source_prefix="Generate: ",
        predicate_marker_type="pred_type",
        use_bilateral_predicate_marker=False,
        append_verb_form=False,
    )
    assert format_prompt(tokens, 7, QANOM_SEQ2SEQ_STYLE, is_verbal=True, preprocessing=options) == (
        "Generate: The student was interested in Luke 's <extra_id_11> research about sea animals . "
    )
    with pytest.raises(DataError, match="verb form"):
        format_prompt(tokens, 7, QANOM_SEQ2SEQ_STYLE, verb_form="", preprocessing=typed)
    with pytest.raises(FactlabError, match="unknown hub parser format"):
        format_prompt(tokens, 7, "t5")


# --- output format ---------------------------------------------------------------------------


def test_parse_generation_recovers_every_gold_qa_of_qasrl_gs(gs, gs_by_key):
    n_qas = 0
    for rows in gs_by_key.values():
        parsed = parse_generation(f"<pad> {gold_generation(rows)}</s>")
        assert parsed.n_malformed == 0 and parsed.n_segments == len(rows)
        assert parsed.qas == [(row.question, list(row.answers)) for row in rows]
        n_qas += len(parsed.qas)
    assert n_qas == len(gs) == 14_290


def test_parse_generation_counts_malformed_segments_and_cleans_questions():
    text = f"<pad> who _ _ jumped _ _ _ ? The fox{QA_SEPARATOR}no question here{QA_SEPARATOR}? orphan{QA_SEPARATOR}</s>"
    parsed = parse_generation(text)
    assert parsed.qas == [("who jumped?", ["The fox"])]
    assert (parsed.n_segments, parsed.n_malformed) == (3, 2)
    assert parse_generation("<pad></s>") == parse_generation("")
    assert parse_generation("").n_segments == 0
    both = parse_generation(f"what did someone say? it{ANSWER_SEPARATOR} {ANSWER_SEPARATOR}that")
    assert both.qas == [("what did someone say?", ["it", "", "that"])]  # the empty answer is kept, to be counted


def test_parse_generation_qanom_seq2seq_model_card_example():
    card = f"<pad> who _ _ researched something _ _ ?{S2S_QUESTION_ANSWER_SEPARATOR} Luke</s>"
    assert parse_generation(card, QANOM_SEQ2SEQ_STYLE).qas == [("who researched something?", ["Luke"])]
    two = (
        f"what _ _ researched _ _ _ ?{S2S_QUESTION_ANSWER_SEPARATOR} sea animals{S2S_ANSWER_SEPARATOR} animals"
        f"{S2S_PAIR_SEPARATOR}where is something ?"
    )
    parsed = parse_generation(two, QANOM_SEQ2SEQ_STYLE)
    assert parsed.qas == [("what researched?", ["sea animals", "animals"])]
    assert parsed.n_malformed == 1


# --- answers back to spans -------------------------------------------------------------------


def test_locate_answer_finds_the_gold_spans_of_qasrl_gs(gs):
    dev = gs[gs["split"] == "dev"]  # one split keeps the test fast
    n_answers = n_ambiguous = 0
    for row in dev[["tokens", "predicate_idx", "answers", "answer_ranges"]].itertuples(index=False):
        tokens = list(row.tokens)
        for answer, gold_range in zip(row.answers, row.answer_ranges, strict=True):
            n_answers += 1
            spans = occurrences(tokens, answer)
            assert tuple(gold_range) in spans
            expected = nearest(spans, row.predicate_idx)
            assert locate_answer(tokens, answer, row.predicate_idx) == expected
            # T5-style spacing and case changes find the same span.
            assert locate_answer(tokens, detokenize(answer), row.predicate_idx) == expected
            if len(spans) == 1:
                assert expected == tuple(gold_range)
            else:
                n_ambiguous += expected != tuple(gold_range)
    assert n_answers == sum(len(answers) for answers in dev["answers"])
    assert n_ambiguous < 0.01 * n_answers  # a repeated answer far from the predicate: rare


def test_locate_answer_falls_back_to_case_and_rejects_absent_text():
    tokens = 'Laura Muir says she is " gutted " she will miss the race .'.split()
    assert locate_answer(tokens, "laura muir") == (0, 2)
    assert locate_answer(tokens, "Muir says") == (1, 3)
    assert locate_answer(tokens, "she", predicate_index=10) == (8, 9)
    assert locate_answer(tokens, "she", predicate_index=2) == (3, 4)
    assert locate_answer(tokens, "she") == (3, 4)
    assert locate_answer(tokens, "Mui r") is None  # a space inside a token is not a boundary
    assert locate_answer(tokens, "Muirs") is None
    assert locate_answer(tokens, "") is None
    assert locate_answer(tokens, 'gutted"') == (6, 8)


def test_locate_answer_on_qasem_consistency_gold_answers(consistency_qas):
    not_found = []
    for row in consistency_qas.itertuples():
        tokens = row.response.split(" ")
        start, end = map(int, row.answer_idx.split("-"))
        span = locate_answer(tokens, row.answer, row.predicate_idx)
        if span is None:
            not_found.append(row.answer)
            continue
        located = " ".join(tokens[span[0] : span[1]])
        assert located.replace(" ", "").lower() == row.answer.replace(" ", "").lower()
        if len(occurrences(tokens, " ".join(tokens[start:end]))) == 1 and " ".join(tokens[start:end]) == located:
            assert span == (start, end)
    # The reference drops these silently; all are answers whose accents the response lacks.
    assert not_found and all(not answer.isascii() for answer in not_found)


# --- predicates ------------------------------------------------------------------------------


def test_event_noun_rule_strips_derivational_suffixes():
    lexicon = {"prepare", "develop", "run", "arrive", "analyze", "discover", "state"}
    assert event_noun_verb("preparation", lexicon) == "prepare"
    assert event_noun_verb("development", lexicon) == "develop"
    assert event_noun_verb("running", lexicon) == "run"
    assert event_noun_verb("arrival", lexicon) == "arrive"
    assert event_noun_verb("analysis", lexicon) == "analyze"
    assert event_noun_verb("discovery", lexicon) == "discover"
    assert event_noun_verb("station", lexicon) == "state"  # the rule's known false positive kind
    assert event_noun_verb("ring", {"r"}) is None
    assert event_noun_verb("table", lexicon) is None
    assert {"prepare", "develop", "attack"} <= verb_lemmas()


def test_detect_predicates_on_qasrl_gs_sentences(gs):
    sentences = [list(tokens) for tokens in gs.drop_duplicates("sentence_id")["tokens"].head(20)]
    found = detect_predicates(sentences)
    assert len(found) == len(sentences)
    verbs = verb_lemmas()
    for tokens, predicates in zip(sentences, found, strict=True):
        for predicate in predicates:
            assert predicate.text == tokens[predicate.index]
            assert predicate.verb_form and predicate.verb_form != "be"
            if not predicate.is_verbal:
                assert predicate.verb_form in verbs
    assert any(p.is_verbal for ps in found for p in ps) and any(not p.is_verbal for ps in found for p in ps)


# --- the model, end to end with a tiny T5 ----------------------------------------------------


def unambiguous_ascii_sentences(gs_by_key: dict[str, list], count: int) -> list[list[list]]:
    """The first `count` ASCII sentences whose every gold answer occurs once: per sentence, the
    gold rows of each predicate."""
    by_sentence: dict[str, list[list]] = {}
    for rows in gs_by_key.values():
        by_sentence.setdefault(rows[0].sentence_id, []).append(rows)
    chosen = []
    for predicates in by_sentence.values():
        tokens = list(predicates[0][0].tokens)
        answers = [answer for rows in predicates for row in rows for answer in row.answers]
        if " ".join(tokens).isascii() and all(len(occurrences(tokens, answer)) == 1 for answer in answers):
            chosen.append(predicates)
        if len(chosen) == count:
            return chosen
    raise AssertionError("too few unambiguous ASCII sentences")


@pytest.fixture(scope="module")
def tiny_gold(gs_by_key) -> list[list[list]]:
    return unambiguous_ascii_sentences(gs_by_key, 3)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, gs, tiny_gold):
    folder = tmp_path_factory.mktemp("tiny_t5")
    sentences = [list(tokens) for tokens in gs["tokens"].head(200)]
    build_tiny_t5(folder, sentences + [list(predicates[0][0].tokens) for predicates in tiny_gold])
    return folder


def gold_predicates(tiny_gold: list[list[list]]) -> tuple[list[list[str]], list[list[Predicate]]]:
    sentences = [list(predicates[0][0].tokens) for predicates in tiny_gold]
    predicates = [[Predicate(rows[0].predicate_idx, rows[0].predicate, True, "") for rows in sentence] for sentence in tiny_gold]
    return sentences, predicates


def assert_counts_add_up(counts: dict[str, int]) -> None:
    assert set(counts) == set(COUNT_KEYS)
    assert counts["n_generations"] == counts["n_predicates"]
    assert counts["n_answers"] == counts["n_qas"] + counts["n_empty_answers"] + counts["n_answers_not_found"]
    assert counts["n_empty_outputs"] + counts["n_malformed_outputs"] <= counts["n_generations"]


def test_tiny_random_t5_loads_by_path_and_counts_its_garbage(tiny_model, tiny_gold):
    sentences, predicates = gold_predicates(tiny_gold)
    parser = HubQASemParser(str(tiny_model), batch_size=2, max_new_tokens=12, num_beams=1)
    assert parser.device == ("cuda" if torch.cuda.is_available() else "cpu")
    parses = parser.parse(sentences, predicates)
    assert [parse.tokens for parse in parses] == sentences
    counts = parser.counts
    assert counts["n_sentences"] == len(sentences)
    assert counts["n_predicates"] == sum(map(len, predicates))
    assert_counts_add_up(counts)
    # A random model writes no well-formed, locatable QA: every output is counted as what went wrong.
    assert sum(len(parse.qas) for parse in parses) == counts["n_qas"]
    assert (
        counts["n_malformed_outputs"] + counts["n_answers_not_found"] + counts["n_empty_answers"] + counts["n_truncated_outputs"]
        > 0
    )
    # Beam search and the default spaCy predicate detector run too; counts accumulate.
    beam = HubQASemParser(str(tiny_model), batch_size=3, max_new_tokens=4, num_beams=2)
    detected = beam.parse(sentences)
    assert len(detected) == len(sentences) and beam.counts["n_predicates"] > 0
    assert_counts_add_up(beam.counts)
    beam.reset_counts()
    assert set(beam.counts.values()) == {0}


def fake_generate(tokenizer, outputs_by_prompt: dict[str, str], eos: bool = True):
    """A `generate` answering each prompt (recognised by its token ids) with a fixed output."""
    by_ids = {tuple(tokenizer(prompt)["input_ids"]): text for prompt, text in outputs_by_prompt.items()}
    calls = []

    def generate(input_ids, attention_mask, **kwargs):
        calls.append(kwargs)
        texts = [by_ids[tuple(row[mask.bool()].tolist())] for row, mask in zip(input_ids, attention_mask, strict=True)]
        encoded = tokenizer(texts, padding=True, return_tensors="pt")["input_ids"]
        if not eos:
            encoded = encoded[:, :-1]
            encoded[encoded == tokenizer.eos_token_id] = tokenizer.pad_token_id
        start = torch.full((len(texts), 1), tokenizer.pad_token_id)
        return torch.cat([start, encoded], dim=1)

    return generate, calls


def test_well_formed_generation_gives_the_gold_qas_and_spans(tiny_model, tiny_gold, monkeypatch):
    sentences, predicates = gold_predicates(tiny_gold)
    parser = HubQASemParser(str(tiny_model), batch_size=2, max_new_tokens=64, num_beams=3)
    outputs, expected = {}, [[] for _ in sentences]
    for number, (tokens, sentence_predicates) in enumerate(zip(sentences, predicates, strict=True)):
        for predicate, rows in zip(sentence_predicates, tiny_gold[number], strict=True):
            text = gold_generation(rows)
            if number == 0 and predicate is sentence_predicates[0]:
                text += f"{QA_SEPARATOR}not a question{QA_SEPARATOR}who is absent? zebra crossing"
            outputs[format_prompt(tokens, predicate.index)] = text
            for row in rows:
                for answer, (start, end) in zip(row.answers, row.answer_ranges, strict=True):
                    expected[number].append(QAPair(predicate, row.question, answer, start, end, source="hub"))
    generate, calls = fake_generate(parser.tokenizer, outputs)
    monkeypatch.setattr(parser.model, "generate", generate)
    parses = parser.parse(sentences, predicates)
    assert [parse.qas for parse in parses] == expected  # input order restored after length sorting
    assert calls and all(call["num_beams"] == 3 and call["max_new_tokens"] == 64 for call in calls)
    counts = parser.counts
    assert counts["n_malformed_outputs"] == 1 and counts["n_malformed_segments"] == 1
    assert counts["n_answers_not_found"] == 1
    assert counts["n_qas"] == sum(map(len, expected)) == counts["n_answers"] - 1
    assert counts["n_truncated_outputs"] == 0
    assert_counts_add_up(counts)


def test_outputs_without_end_token_are_counted_as_truncated(tiny_model, tiny_gold, monkeypatch):
    sentences, predicates = gold_predicates(tiny_gold)
    parser = HubQASemParser(str(tiny_model), max_new_tokens=8)
    outputs = {format_prompt(tokens, p.index): "who? x" for tokens, ps in zip(sentences, predicates, strict=True) for p in ps}
    generate, _ = fake_generate(parser.tokenizer, outputs, eos=False)
    monkeypatch.setattr(parser.model, "generate", generate)
    parser.parse(sentences, predicates)
    assert parser.counts["n_truncated_outputs"] == parser.counts["n_generations"] == len(outputs)


def test_qanom_seq2seq_style_reads_preprocessing_from_the_local_folder(tiny_model, tiny_gold, tmp_path, monkeypatch):
    folder = tmp_path / "qanom_seq2seq"
    shutil.copytree(tiny_model, folder)
    with pytest.raises(FactlabError, match="preprocessing_kwargs.json"):
        HubQASemParser(str(folder), style=QANOM_SEQ2SEQ_STYLE)
    (folder / "preprocessing_kwargs.json").write_text(json.dumps({"source_prefix": "Generate QAs for <predicate_type> QASRL: "}))
    parser = HubQASemParser(str(folder), style=QANOM_SEQ2SEQ_STYLE, num_beams=1)
    assert parser.preprocessing == Seq2SeqPreprocessing("Generate QAs for <predicate_type> QASRL: ")
    row = tiny_gold[0][0][0]
    tokens = list(row.tokens)
    predicate = Predicate(int(row.predicate_idx), row.predicate, True, "suspend")
    prompt = format_prompt(tokens, predicate.index, QANOM_SEQ2SEQ_STYLE, verb_form="suspend", preprocessing=parser.preprocessing)
    answer = row.answers[0]
    text = f"what _ _ suspended _ _ _ ?{S2S_QUESTION_ANSWER_SEPARATOR} {answer}"
    generate, _ = fake_generate(parser.tokenizer, {prompt: text})
    monkeypatch.setattr(parser.model, "generate", generate)
    [parse] = parser.parse([tokens], [[predicate]])
    start, end = row.answer_ranges[0]
    assert parse.qas == [QAPair(predicate, "what suspended?", answer, start, end, source="hub")]


def test_bad_inputs_and_mismatched_models_raise(tiny_model, tmp_path, gs):
    parser = HubQASemParser(str(tiny_model), num_beams=1)
    with pytest.raises(DataError, match="predicate index 9"):
        parser.parse([["a", "b"]], [[Predicate(9, "x", True)]])
    with pytest.raises(DataError, match="2 predicate lists for 1 sentences"):
        parser.parse([["a", "b"]], [[], []])
    with pytest.raises(DataError, match="without spaces"):
        parser.parse([["a b"]], [[]])
    assert parser.parse([], []) == [] and parser.counts["n_generations"] == 0
    few_markers = tmp_path / "few_markers"
    build_tiny_t5(few_markers, [list(gs.iloc[0].tokens)], extra_ids=2)
    with pytest.raises(FactlabError, match="lacks the qasem_parser markers"):
        HubQASemParser(str(few_markers))
    with pytest.raises(FactlabError, match="cannot load hub parser"):
        HubQASemParser(str(tmp_path / "missing" / "model"))

"""The aligner's token head: its labels (synthetic edits, WiCE's flags, HaluEval's answers), its training, its
reading at inference, and the places that read it (the localisation analysis, the checker's spans)."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import roc_auc_score
from test_metaeval_localisation import HAND_GOLD, run, sentence, write_inputs
from test_train_precision import TINY_ALIGNER
from test_train_synthetic import FIXTURE

from factlab.checker.explain import span_records
from factlab.data.registry import get_spec
from factlab.models.aligner import AlignerConfig, AlignerScorer, load_aligner, new_network, save_aligner
from factlab.models.engine import EngineSettings, encode_pairs, pad_batch, score_pairs
from factlab.models.token_support import score_tokens
from factlab.models.token_words import phrases_from_words, word_unsupported
from factlab.train import token_labels
from factlab.train.aligner import batch_token_labels, row_targets, token_targets, train_aligner
from factlab.train.mixture import corpus_pairs, synthetic_pairs
from factlab.train.synthetic.pairs import SyntheticSettings, make_synthetic_pairs

# Labels


def test_edited_spans_worked_by_hand():
    assert token_labels.edited_spans("Smith won in 2013.", "Smith won in 2015.") == [(13, 18)]  # "2015."
    assert token_labels.edited_spans("He opened the door.", "He did not open the door.") == [(3, 15)]  # "did not open"
    assert token_labels.edited_spans("He did not open it.", "He opened it.") == [(3, 9)]  # "opened"
    assert token_labels.edited_spans("They ate.", "They ate.") == []
    # a deletion marks the word now at its place: here the one after the removed "not"
    assert token_labels.edited_spans("It is not red.", "It is red.") == [(6, 10)]  # "red."
    # a swap marks both arguments, not the verb between them
    assert token_labels.edited_spans("Smith beat Jones.", "Jones beat Smith.") == [(0, 5), (11, 17)]
    assert token_labels.synthetic_spans("argument_swap", "Smith beat Jones.", "Jones beat Smith.") == [(0, 5), (11, 17)]


def test_synthetic_spans_cover_exactly_the_edit(tmp_path):
    documents = pd.read_json(FIXTURE, lines=True, dtype=False)
    pairs, _ = make_synthetic_pairs(documents, SyntheticSettings(premise_words=60, claims_per_document=6, seed=11))
    located = 0
    for row in pairs.itertuples():
        spans = token_labels.synthetic_spans(row.transform, row.original_claim, row.text_b)
        if row.transform in token_labels.SUPPORTED_TRANSFORMS:
            assert spans == []
        elif row.transform in token_labels.WHOLE_CLAIM_TRANSFORMS:
            assert spans == [(0, len(row.text_b))]
        else:
            start, end = spans[0][0], spans[-1][1]
            # outside the spans the claim is the original's own text: its start a prefix, its end a suffix
            assert row.original_claim.startswith(row.text_b[:start].rstrip()) and row.original_claim.endswith(
                row.text_b[end:].lstrip()
            )
            assert all(row.text_b[a:b].strip() == row.text_b[a:b] and b > a for a, b in spans)
            if row.transform != "argument_swap":  # one edit: one span
                assert len(spans) == 1
            located += 1
    assert located >= 10


def test_mixture_synthetic_rows_carry_their_spans():
    documents = pd.read_json(FIXTURE, lines=True, dtype=False)
    frames = {"fixture": pd.DataFrame({"doc_id": documents["doc_id"].astype(str), "source": documents["text"]})}
    from factlab.train.mixture import MixtureSettings

    settings = MixtureSettings(synthetic_documents={"fixture": 0}, synthetic={"premise_words": 60, "claims_per_document": 3})
    pairs, counts = synthetic_pairs(frames, settings)
    assert pairs["unsupported_spans"].notna().sum() == len(pairs) - counts["token_spans_unlocated"]
    negatives = pairs[(pairs["label_bin"] == 0) & pairs["unsupported_spans"].notna()]
    assert len(negatives) and all(json.loads(value) for value in negatives["unsupported_spans"])


def test_wice_subclaims_spans_are_the_flagged_tokens(raw):
    frame = get_spec("wice_subclaims").build(raw).frame
    rows = corpus_pairs("wice_subclaims", frame)
    assert rows["unsupported_spans"].notna().all()
    for (_, record), spans, premise in zip(frame.iterrows(), rows["unsupported_spans"], rows["text_a"], strict=True):
        tokens, flags = json.loads(record["claim_tokens"]), json.loads(record["non_supported_spans"])
        flagged = [token for token, flag in zip(tokens, flags, strict=True) if flag]
        assert [record["output"][start:end] for start, end in json.loads(spans)] == flagged
        # the premise: the annotated evidence sentences, each verbatim from the cited page
        offsets = json.loads(record["evidence_offsets"])
        chosen = sorted({i for group in json.loads(record["supporting_sentences"]) for i in group})
        assert all(record["source"][offsets[i][0] : offsets[i][1]].strip() in premise for i in chosen)
    assert sum(len(json.loads(spans)) for spans in rows["unsupported_spans"]) == 1320  # the mirror README's count


def test_halueval_hallucinated_answers_are_their_spans(raw):
    frame = get_spec("halueval_qa").build(raw).frame
    rows = corpus_pairs("halueval_qa", frame)
    hallucinated = (frame["answer_kind"] == "hallucinated").to_numpy()
    for record, spans in zip(frame[hallucinated].to_dict("records"), rows["unsupported_spans"][hallucinated], strict=True):
        ((start, end),) = json.loads(spans)
        assert record["output"][start:end] == record["answer"].strip()
    assert (rows.loc[~hallucinated, "unsupported_spans"] == "[]").all()


def test_piece_labels_worked_by_hand():
    offsets = np.array([[0, 1], [2, 5], [6, 9], [9, 11]])  # "A dog sat.." pieces
    assert token_labels.piece_labels(offsets, [(2, 5)]).tolist() == [0, 1, 0, 0]
    assert token_labels.piece_labels(offsets, [(7, 10)]).tolist() == [0, 0, 1, 1]
    assert token_labels.piece_labels(offsets, []).tolist() == [0, 0, 0, 0]
    assert token_labels.piece_labels(offsets, None).tolist() == [-100] * 4


# Training


@pytest.fixture(scope="module")
def token_mixture(raw) -> pd.DataFrame:
    """Real pairs with token labels: 24 WiCE subclaims and 24 HaluEval answers, the first 16 for validation."""
    wice = corpus_pairs("wice_subclaims", get_spec("wice_subclaims").build(raw).frame).head(24)
    halueval = corpus_pairs("halueval_qa", get_spec("halueval_qa").build(raw).frame).head(24)
    pairs = pd.concat([wice, halueval], ignore_index=True).sample(frac=1.0, random_state=0).reset_index(drop=True)
    return pairs.assign(split=["validation"] * 16 + ["train"] * 32)


def test_batch_labels_sit_on_the_hypothesis_pieces(token_mixture):
    _, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=96))
    frame = token_mixture.head(8)
    pairs = list(zip(frame["text_a"], frame["text_b"], strict=True))
    encoded = encode_pairs(tokenizer, pairs, 96)
    targets = row_targets(frame)
    targets.tokens = token_targets(frame, tokenizer, encoded)
    ids, _, _ = pad_batch(encoded, list(range(8)), tokenizer.pad_token_id, torch.device("cpu"))
    labels = batch_token_labels(targets, encoded, list(range(8)), ids.shape[1])
    for row, (hypothesis, spans) in enumerate(zip(frame["text_b"], frame["unsupported_spans"], strict=True)):
        pieces = tokenizer(hypothesis, add_special_tokens=False, return_offsets_mapping=True)
        kept = int(encoded.hypothesis_kept[row])
        labelled = (labels[row] != -100).numpy()
        assert ids[row][labelled].tolist() == pieces["input_ids"][:kept]  # exactly the kept hypothesis pieces
        unsupported = [any(s < end and e > start for start, end in json.loads(spans)) for s, e in pieces["offset_mapping"][:kept]]
        assert labels[row][labelled].tolist() == [int(flag) for flag in unsupported]


def test_training_trains_the_token_head_and_validates_it(token_mixture, tmp_path):
    settings = replace(TINY_ALIGNER, epochs=2, token_head=True)
    network, tokenizer, log = train_aligner(token_mixture, settings, device="cpu", precision="fp32")
    assert network.unsupported is not None
    assert "train_loss_tokens" in log["epochs"][0] and log["counts"]["train_pieces_unsupported"] > 0
    assert 0.0 <= log["epochs"][-1]["validation_token_auc"] <= 1.0
    # a saved aligner keeps its head; one trained without it loads without it
    save_aligner(network, tokenizer, tmp_path / "with", {"settings": "test"})
    loaded, _ = load_aligner(tmp_path / "with")
    assert loaded.unsupported is not None and torch.equal(loaded.unsupported.weight, network.unsupported.weight)
    plain, _, _ = train_aligner(token_mixture, replace(TINY_ALIGNER, epochs=1, token_head=False), device="cpu")
    save_aligner(plain, tokenizer, tmp_path / "without", {"settings": "test"})
    assert load_aligner(tmp_path / "without")[0].unsupported is None


# Inference


def test_score_tokens_reads_each_hypothesis_piece_and_the_engines_support(token_mixture):
    torch.manual_seed(3)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=96, token_head=True))
    scorer = AlignerScorer(network, tokenizer, device="cpu")
    pairs = list(zip(token_mixture["text_a"].head(12), token_mixture["text_b"].head(12), strict=True))
    result = score_tokens(scorer, pairs, EngineSettings(token_budget=600, progress=False))
    engine = score_pairs(scorer, pairs, EngineSettings(token_budget=600, progress=False))
    np.testing.assert_allclose(result.support, engine.scores, atol=1e-5)  # the same batches read the 3-way head alike
    for (_, hypothesis), offsets, unsupported, cut in zip(
        pairs, result.offsets, result.unsupported, result.hypothesis_pieces_cut, strict=True
    ):
        tokens = tokenizer.convert_ids_to_tokens(tokenizer(hypothesis, add_special_tokens=False)["input_ids"])
        assert len(offsets) == len(unsupported) == len(tokens) - cut
        for (start, end), token in zip(offsets, tokens, strict=False):  # the uncased tokenizer drops accents
            plain = "".join(
                c for c in unicodedata.normalize("NFD", hypothesis[start:end].lower()) if not unicodedata.combining(c)
            )
            assert token == "[UNK]" or plain == token.removeprefix("##")
        assert ((unsupported > 0) & (unsupported < 1)).all()
    # each pair alone, unpadded: the same probabilities as in its length batch
    alone = score_tokens(scorer, pairs[:1], EngineSettings(progress=False))
    np.testing.assert_allclose(alone.unsupported[0], result.unsupported[0], atol=1e-5)


def unsupported_phrases(text: str, offsets: np.ndarray, p: np.ndarray, threshold: float) -> list:
    """The phrases the checker reads from the head alone: its words' P(unsupported), merged (span_records)."""
    return phrases_from_words(text, word_unsupported(text, offsets, p), threshold)


def test_unsupported_phrases_worked_by_hand():
    text = "A dog sat on the mat in 2015."
    offsets = np.array([[0, 1], [2, 5], [6, 9], [10, 12], [13, 16], [17, 20], [21, 23], [24, 28], [28, 29]])
    p = np.array([0.1, 0.9, 0.2, 0.1, 0.1, 0.1, 0.6, 0.7, 0.3])
    # "dog" alone; "in" and "2015" merge (only a space between), the full stop stays out: the phrase's probability
    # is its largest
    assert unsupported_phrases(text, offsets, p, 0.5) == [(2, 5, 0.9), (21, 28, 0.7)]
    assert unsupported_phrases(text, offsets, p, 0.95) == []


def test_checker_spans_name_their_sentence():
    output = "Cats purr. Dogs fly."
    pieces = [
        {"start": 0, "end": 4, "support": 0.9},
        {"start": 5, "end": 9, "support": 0.8},
        {"start": 9, "end": 10, "support": 0.9},
        {"start": 11, "end": 15, "support": 0.7},
        {"start": 16, "end": 19, "support": 0.2},
        {"start": 19, "end": 20, "support": 0.9},
    ]
    source = "Cats purr. Dogs bark at night."
    evidence = [{"source_sentence": 1, "start": 11, "end": 30, "support": 0.4}]
    types = {"EntE": 0.1, "CircE": 0.1, "RelE": 0.6, "CorefE": 0.05, "OutE": 0.15}
    second = {"start": 11, "end": 20, "evidence": evidence, "error_types": types}
    result = {"tokens": pieces, "sentences": [{"start": 0, "end": 10}, second]}
    spans = span_records(result, output, 0.5, source)
    explanation = 'no source sentence mentions "fly"; the closest source sentence (sentence 2) says "Dogs bark at night."'
    assert spans == [
        {
            "text": "fly",
            "start": 16,
            "end": 19,
            "probability": pytest.approx(0.8),
            "sentence": 1,
            "explanation": explanation,
            # the sentence's most likely FRANK category, and FAVA's name for it
            "error_type": "RelE",
            "error_type_probability": 0.6,
            "fava_type": "relation",
        }
    ]
    assert span_records({"tokens": None, "sentences": []}, output, 0.5) == []


def test_explanations_worked_by_hand():
    from factlab.checker.explain import explain

    source = "Smith won the election in 2013. The mayor thanked voters."
    evidence = "Smith won the election in 2013."
    output = "Jones won the election in 2015."
    # a number the evidence states otherwise; a name it replaces
    assert explain("2015", output, source, evidence, 1) == '"2015" is not supported: the source says "2013" (sentence 1)'
    assert explain("Jones", output, source, evidence, 1) == '"Jones" is not supported: the source says "Smith" (sentence 1)'
    # words the source has elsewhere; words it never has
    assert explain("the mayor", "The mayor won.", source, evidence, 1).startswith('"the mayor" is in the source, but not as')
    assert explain("a landslide", output, source, None, None) == 'no source sentence mentions "a landslide"'


# The localisation analysis reads the token detail as a scorer of its own


def test_localisation_evaluates_the_token_detail_as_its_own_scorer(tmp_path):
    def pieces(output: str, supports: dict[str, float]) -> list[dict]:
        found, position = [], 0
        for text, value in supports.items():
            start = output.index(text.strip("#"), position)
            found.append({"start": start, "end": start + len(text.strip("#")), "support": value})
            position = start + len(text.strip("#"))
        return found

    tokens = {
        "d1": pieces("Cats purr. Dogs bark.", {"Cats": 0.9, "purr": 0.9, ".": 0.9, "Dogs": 0.4, "bark": 0.3, "#.": 0.9}),
        "d2": pieces("Birds sing.", {"Birds": 0.2, "sing": 0.3, ".": 0.9}),
        # "fly" read as two pieces: the gold token takes the lower support
        "t1": pieces("Fish swim. Fish fly.", {"Fish": 0.9, "swim": 0.9, ".": 0.9, "#Fish": 0.8, "f": 0.3, "ly": 0.6, "#.": 0.9}),
        "t2": pieces("Snow is hot.", {"Snow": 0.9, "is": 0.9, "hot": 0.1, ".": 0.9}),
    }
    scored = [
        ("d1", [sentence("Cats purr. Dogs bark.", "Cats purr.", 0.9), sentence("Cats purr. Dogs bark.", "Dogs bark.", 0.6)]),
        ("d2", [sentence("Birds sing.", "Birds sing.", 0.7)]),
        ("t1", [sentence("Fish swim. Fish fly.", "Fish swim.", 0.95), sentence("Fish swim. Fish fly.", "Fish fly.", 0.8)]),
        ("t2", [sentence("Snow is hot.", "Snow is hot.", 0.2)]),
    ]
    gold, path = write_inputs(tmp_path, HAND_GOLD, scored)
    frame = pd.read_parquet(path)
    frame["tokens"] = [tokens[example_id] for example_id in frame["example_id"]]
    frame.to_parquet(path)
    run(tmp_path, gold, [path])
    table = pd.read_csv(tmp_path / "tokens.csv")
    rows = table[table["scorer"] == "alignscore_tokens"].set_index("policy")
    support = np.array([0.9, 0.9, 0.9, 0.8, 0.3, 0.9, 0.9, 0.9, 0.1, 0.9])  # t1, t2 tokens, by hand
    y = np.array([0, 0, 0, 0, 1, 0, 0, 0, 1, 0])
    assert rows.loc["fixed05", "roc_auc"] == pytest.approx(roc_auc_score(y, 1 - support), abs=1e-6)
    assert rows.loc["fixed05", ["precision", "recall"]].tolist() == pytest.approx([1.0, 1.0])
    assert set(table["scorer"]) == {"alignscore", "alignscore_tokens"}


def test_checker_token_threshold_is_the_validation_tuned_one(tmp_path):
    from factlab.checker.pipeline.package_command import token_reading

    def token_threshold(path):
        reading = token_reading(path)
        return reading.threshold, reading.source

    def tuned(value: float) -> dict:
        return {"thresholds": {"val_tuned": value}}

    report = {
        "datasets": {
            "xsumfaith_spans": {"split": {"kind": "documents"}, "scorers": {"alignscore_tokens": tuned(0.4)}},
            "wice_tokens": {
                "split": {"kind": "upstream", "validation": "dev", "evaluated": "test"},
                "scorers": {"alignscore": tuned(0.9), "alignscore_tokens": tuned(0.3)},
            },
        }
    }
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    threshold, source = token_threshold(str(path))
    assert threshold == pytest.approx(0.7) and "wice_tokens (dev)" in source  # WiCE's dev split first; 1 - support
    del report["datasets"]["wice_tokens"]
    path.write_text(json.dumps(report))
    assert token_threshold(str(path))[0] == pytest.approx(0.6)
    assert token_threshold(None) == (0.5, "default 0.5 (no validation threshold recorded with this model)")
    # a fitted localiser and its tuned threshold come first, and travel together
    localiser = {"features": ["head"], "weights": [1.0], "intercept": 0.0}
    report["localisers"] = {"alignscore": localiser}
    report["datasets"]["xsumfaith_spans"]["scorers"]["alignscore_localiser"] = tuned(0.45)
    path.write_text(json.dumps(report))
    reading = token_reading(str(path))
    assert reading.threshold == pytest.approx(0.55) and reading.localiser == localiser and "token localiser" in reading.source
    # the checker marks exactly the words the analysis flags at that threshold: support 0.3 is not below 0.3
    offsets, p = np.array([[0, 3], [4, 7]]), np.array([0.7, 0.71])
    assert unsupported_phrases("Bad cat", offsets, p, 0.7) == [(4, 7, 0.71)]


def test_the_type_head_trains_on_the_synthetic_errors_types():
    from factlab.models.aligner import ERROR_TYPES
    from factlab.train.mixture import MixtureSettings

    documents = pd.read_json(FIXTURE, lines=True, dtype=False)
    frames = {"fixture": pd.DataFrame({"doc_id": documents["doc_id"].astype(str), "source": documents["text"]})}
    settings = MixtureSettings(synthetic_documents={"fixture": 0}, synthetic={"premise_words": 60, "claims_per_document": 4})
    pairs, _ = synthetic_pairs(frames, settings)
    assert set(pairs["error_type"].dropna()) <= set(ERROR_TYPES)
    # every negative transform with a FRANK category carries it; positives carry none
    assert pairs.loc[pairs["label_bin"] == 1, "error_type"].isna().all()
    typed = pairs.dropna(subset=["error_type"])
    assert (typed["transform"].map(token_labels.ERROR_TYPE_OF) == typed["error_type"]).all()
    mixture = pairs.assign(split=["validation" if i % 3 == 0 else "train" for i in range(len(pairs))])
    network, tokenizer, log = train_aligner(mixture, replace(TINY_ALIGNER, epochs=1, type_head=True), device="cpu")
    assert network.error_type is not None and "train_loss_error_type" in log["epochs"][0]
    assert log["counts"]["train_pairs_error_typed"] == int(mixture.loc[mixture["split"] == "train", "error_type"].notna().sum())
    scorer = AlignerScorer(network, tokenizer, device="cpu")
    result = score_tokens(scorer, list(zip(typed["text_a"], typed["text_b"], strict=True)), EngineSettings(progress=False))
    assert result.error_types.shape == (len(typed), len(ERROR_TYPES))
    np.testing.assert_allclose(result.error_types.sum(axis=1), 1.0, atol=1e-5)


def test_correction_candidates_and_choice_worked_by_hand():
    from factlab.checker.correct import apply_edits, choose_edits, span_candidates

    source = "Smith won the election in 2013. The mayor thanked voters."
    output = "Jones won the election in 2015 by a landslide."
    sentence = {"start": 0, "end": len(output), "chunk_start": 0, "chunk_end": 31, "evidence": [{"start": 0, "end": 31}]}
    year = span_candidates(0, 0, {"start": 26, "end": 30}, output, source, sentence)
    name = span_candidates(0, 1, {"start": 0, "end": 5}, output, source, sentence)
    extra = span_candidates(0, 2, {"start": 31, "end": 45}, output, source, sentence)
    # the evidence's own number and name replace the span's; content with no replacement is deleted, space and all
    assert [c.sentence for c in year] == ["Jones won the election in 2013 by a landslide."]
    assert [c.sentence for c in name] == ["Smith won the election in 2015 by a landslide."]
    assert [(c.start, c.end, c.sentence) for c in extra] == [(30, 45, "Jones won the election in 2015.")]
    assert span_candidates(0, 3, {"start": 0, "end": 5}, "Jones won.", source, {**sentence, "end": 10, "evidence": []}) == []
    premise, original = source[:31], output
    # kept only when the checker then finds the sentence supported (>= 0.5) and better than before (0.1)
    chosen = choose_edits([*year, *name, *extra], [0.7, 0.4, 0.9], {(premise, original): 0.1}, 0.5)
    assert set(chosen) == {(0, 0), (0, 2)}
    text, edits = apply_edits(output, list(chosen.values()))
    assert text == "Jones won the election in 2013."
    assert [(e["text"], e["replacement"], e["support_after"]) for e in edits] == [
        ("2015", "2013", 0.7),
        (" by a landslide", "", 0.9),
    ]
    # a supported sentence is never changed
    assert choose_edits(year, [0.95], {(premise, original): 0.96}, 0.5) == {}

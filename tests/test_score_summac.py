"""SummaC-ZS over real preprocessed text, against a brute-force NLI matrix scored one pair at a time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tiny_aligner import tiny_aligner

from factlab.errors import ConfigError
from factlab.models.aligner import AlignerScorer
from factlab.models.engine import EngineSettings, reference_distributions
from factlab.preprocess.benchmark import sentence_units
from factlab.score.summac import SummaCSettings, paragraph_groups, score_summac_zs, source_units
from factlab.text.sentences import Sentence

FIXTURES = Path(__file__).parent / "fixtures"
ENGINE = EngineSettings(progress=False)


@pytest.fixture(scope="module")
def scorer() -> AlignerScorer:
    return tiny_aligner(3)


def frame(sources: list[str], outputs: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "example_id": [f"ex{i}" for i in range(len(sources))],
            "doc_id": [f"doc{i}" for i in range(len(sources))],
            "source": sources,
            "output": outputs,
        }
    )


def side(sentences: pd.DataFrame, name: str, owner: str, key: str) -> list[Sentence]:
    rows = sentences[(sentences["side"] == name) & (sentences[owner] == key)].sort_values("sentence_index")
    return [Sentence(t, s, e) for t, s, e in rows[["text", "start", "end"]].itertuples(index=False)]


def matrix(scorer: AlignerScorer, units: list[str], outputs: list[str]) -> np.ndarray:
    """[output sentences, units, 3]: every pair alone through the reference loop (no batching, no dedup, no cache)."""
    pairs = [(unit, output) for output in outputs for unit in units]
    return reference_distributions(scorer, pairs, pad_to=256).reshape(len(outputs), len(units), 3)


def per_sentence(image: np.ndarray, use_contradiction: bool) -> np.ndarray:
    return image[..., 0].max(axis=1) - (image[..., 2].max(axis=1) if use_contradiction else 0.0)


@pytest.fixture(scope="module")
def xsum() -> pd.DataFrame:
    """Three real QAGS-XSum articles and summaries, a second output sentence added to each."""
    data = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv").head(3)
    return frame(list(data["document"]), list(data["summary"] + " It was reported on monday."))


@pytest.fixture(scope="module")
def xsum_images(xsum: pd.DataFrame, scorer: AlignerScorer) -> tuple[pd.DataFrame, list[np.ndarray], list[list[Sentence]]]:
    sentences, _ = sentence_units(xsum, "fixture")
    images, units = [], []
    for example_id, doc_id in zip(xsum["example_id"], xsum["doc_id"], strict=True):
        source = side(sentences, "source", "doc_id", doc_id)
        output = side(sentences, "output", "example_id", example_id)
        assert all(len(s.text) > 10 for s in source + output)  # no cap bites here: reference = corrected
        images.append(matrix(scorer, [s.text for s in source], [s.text for s in output]))
        units.append(source)
    return sentences, images, units


@pytest.mark.parametrize(
    ("variant", "use_contradiction", "op2"),
    [("reference", True, "mean"), ("corrected", True, "min"), ("reference", False, "mean")],
)
def test_sentence_scores_are_the_matrix_maxima(
    xsum: pd.DataFrame, xsum_images: tuple, scorer: AlignerScorer, variant: str, use_contradiction: bool, op2: str
) -> None:
    sentences, images, units = xsum_images
    settings = SummaCSettings("sentence", use_contradiction, op2, variant)
    scores, counts = score_summac_zs(xsum, sentences, scorer, settings, ENGINE)
    assert counts["pairs"] == sum(image.shape[0] * image.shape[1] for image in images)
    assert counts["dropped_short_source_units"] == counts["dropped_source_units_over_cap"] == 0
    for row, image, source in zip(scores.itertuples(), images, units, strict=True):
        expected = per_sentence(image, use_contradiction)
        assert row.score == pytest.approx(expected.mean() if op2 == "mean" else expected.min(), abs=1e-5)
        assert row.n_chunks == len(source) and row.n_sentences == len(row.sentences) == 2
        for item, sentence_image in zip(row.sentences, image, strict=True):
            best = int(np.argmax(sentence_image[:, 0]))
            assert (item["best_chunk"], item["chunk_start"], item["chunk_end"]) == (best, source[best].start, source[best].end)
            assert item["max_entail"] == pytest.approx(sentence_image[:, 0].max(), abs=1e-5)
            assert item["max_contradict"] == pytest.approx(sentence_image[:, 2].max(), abs=1e-5)
            assert item["contradict_chunk"] == int(np.argmax(sentence_image[:, 2]))
            assert (
                xsum.loc[xsum["example_id"] == row.example_id, "output"].item()[item["start"] : item["end"]] == item["sentence"]
            )


def test_two_sentence_units_by_hand(scorer: AlignerScorer) -> None:
    """The first four sentences of a real article: units are each sentence with the next, and the last alone."""
    article = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")["document"].iloc[2]
    s0 = "India finished the opening day of the final test against south africa on 231-7 - the highest score of the series."
    s1 = (
        "Neither side had amassed more than 215 in an innings in the previous three tests and india, who lead 2-0, "
        "were struggling on 66-3 and 139-6 in delhi."
    )
    s2 = "But ajinkya rahane hit 89 not out in half-century partnerships with virat kohli (44) and ravindra jadeja (24)."
    s3 = "Recalled fast bowler kyle abbott (3-23) and spinner dane piedt (4-101) were the only south african wicket takers."
    source = article[:488]
    assert source == f"{s0} {s1} {s2} {s3}"
    examples = frame([source], ["India were 231-7 at the end of the first day. Rahane scored a century."])
    sentences, _ = sentence_units(examples, "fixture")
    units, report = source_units(side(sentences, "source", "doc_id", "doc0"), source, SummaCSettings("2sents"))
    assert [unit.text for unit in units] == [f"{s0} {s1}", f"{s1} {s2}", f"{s2} {s3}", s3]
    assert [(unit.start, unit.end) for unit in units] == [(0, 263), (114, 374), (264, 488), (375, 488)]
    assert report.short_dropped == report.over_cap_dropped == 0
    scores, counts = score_summac_zs(examples, sentences, scorer, SummaCSettings("2sents"), ENGINE)
    outputs = ["India were 231-7 at the end of the first day.", "Rahane scored a century."]
    image = matrix(scorer, [f"{s0} {s1}", f"{s1} {s2}", f"{s2} {s3}", s3], outputs)
    assert scores["score"].item() == pytest.approx(per_sentence(image, True).mean(), abs=1e-5)
    assert counts["pairs"] == counts["distinct_pairs_scored"] == 8


def test_reference_caps_drop_short_units_then_cap_and_count(scorer: AlignerScorer) -> None:
    """A real SummEval article whose 7th sentence is 'Age: 22 .' (9 characters); its real summary plus that short sentence."""
    data = pd.read_csv(FIXTURES / "custom" / "true_summeval_rows6-17.csv")
    article = data["grounding"].iloc[10]
    examples = frame([article], [data["generated_text"].iloc[11] + " Age: 22 ."])
    sentences, _ = sentence_units(examples, "fixture")
    source = side(sentences, "source", "doc_id", "doc0")
    output = side(sentences, "output", "example_id", "ex0")
    assert len(source) == 29 and source[6].text == "Age: 22 ." and len(source[9].text) == 11
    assert output[-1].text == "Age: 22 ." and len(output) == 4

    reference = SummaCSettings("sentence", variant="reference", max_source_units=10)
    scores, counts = score_summac_zs(examples, sentences, scorer, reference, ENGINE)
    kept = [s for s in source if len(s.text) > 10][:10]  # sentences 0-5 and 7-10: the filter runs before the cap
    assert [s.start for s in kept] == [s.start for s in source[:6] + source[7:11]]
    assert counts["dropped_short_source_units"] == 1
    assert counts["dropped_source_units_over_cap"] == 29 - 1 - 10
    assert counts["dropped_short_output_sentences"] == 1
    row = scores.iloc[0]
    assert (row.n_chunks, row.n_sentences, row.n_sentences_dropped) == (10, 3, 1)
    assert [item["sentence_index"] for item in row.sentences] == [0, 1, 2]
    image = matrix(scorer, [s.text for s in kept], [s.text for s in output[:3]])
    assert row.score == pytest.approx(per_sentence(image, True).mean(), abs=1e-5)
    assert row.sentences[0]["chunk_start"] == kept[int(np.argmax(image[0, :, 0]))].start

    corrected, counts = score_summac_zs(examples, sentences, scorer, SummaCSettings("sentence", variant="corrected"), ENGINE)
    assert counts["dropped_short_source_units"] == counts["dropped_source_units_over_cap"] == 0
    assert counts["dropped_short_output_sentences"] == 0
    assert (corrected["n_chunks"].item(), corrected["n_sentences"].item()) == (29, 4)
    image = matrix(scorer, [s.text for s in source], [s.text for s in output])
    assert corrected["score"].item() == pytest.approx(per_sentence(image, True).mean(), abs=1e-5)


def test_reference_scores_zero_without_units_corrected_scores_the_text(scorer: AlignerScorer) -> None:
    examples = frame(["Below", ""], ["Doyne met children in nepal.", "Doyne met children in nepal."])  # a real 5-char unit
    sentences, _ = sentence_units(examples, "fixture")
    scores, counts = score_summac_zs(examples, sentences, scorer, SummaCSettings(variant="reference"), ENGINE)
    assert scores["score"].tolist() == [0.0, 0.0]  # SummaC's all-zero image
    assert counts["examples_scored_zero_without_units"] == 2 and counts["dropped_short_source_units"] == 1
    assert counts["empty_sources"] == 1 and counts["pairs"] == 0
    scores, counts = score_summac_zs(examples, sentences, scorer, SummaCSettings(variant="corrected"), ENGINE)
    image = matrix(scorer, ["Below", ""], ["Doyne met children in nepal."])  # the empty source is one empty unit
    assert scores["score"].tolist() == pytest.approx(list(image[0, :, 0] - image[0, :, 2]), abs=1e-5)
    assert counts["examples_scored_zero_without_units"] == 0


def test_paragraphs_follow_blank_lines_else_the_document(scorer: AlignerScorer) -> None:
    """Real sentences of a QAGS-XSum article set out in three paragraphs."""
    article = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")["document"].iloc[2]
    s = [article[0:113], article[114:263], article[264:374], article[375:488]]
    source = f"{s[0]}\n\n{s[1]} {s[2]}\n\n{s[3]}"
    examples = frame([source], ["India were 231-7 at the end of the first day."])
    sentences, _ = sentence_units(examples, "fixture")
    settings = SummaCSettings("paragraph")
    scores, counts = score_summac_zs(examples, sentences, scorer, settings, ENGINE)
    paragraphs = [s[0], f"{s[1]} {s[2]}", s[3]]
    image = matrix(scorer, paragraphs, ["India were 231-7 at the end of the first day."])
    assert scores["n_chunks"].item() == 3 and counts["paragraph_fallback_documents"] == 0
    assert scores["score"].item() == pytest.approx(per_sentence(image, True).mean(), abs=1e-5)
    best = scores["sentences"].item()[0]
    assert source[best["chunk_start"] : best["chunk_end"]] == paragraphs[best["best_chunk"]]

    # without the source text the breaks cannot be seen: one unit, the sentences joined, counted
    scores, counts = score_summac_zs(examples.drop(columns="source"), sentences, scorer, settings, ENGINE)
    assert scores["n_chunks"].item() == 1 and counts["paragraph_fallback_documents"] == 1
    # a text with no blank line is cut at line breaks (SummaC's fallback)
    lines = f"{s[0]}\n{s[1]} {s[2]}"
    assert paragraph_groups(located(lines, s[:3]), lines) == ([(0, 1), (1, 3)], 0)
    # ... but where there is one, only blank lines cut
    mixed = f"{s[0]}\n\n{s[1]}\n{s[2]}"
    assert paragraph_groups(located(mixed, s[:3]), mixed) == ([(0, 1), (1, 3)], 0)


def located(text: str, pieces: list[str]) -> list[Sentence]:
    return [Sentence(piece, text.index(piece), text.index(piece) + len(piece)) for piece in pieces]


def test_bad_settings_are_config_errors() -> None:
    for bad in ({"granularity": "chapter"}, {"op2": "median"}, {"variant": "faithful"}, {"max_source_units": 0}):
        with pytest.raises(ConfigError, match="summac"):
            SummaCSettings(**bad)

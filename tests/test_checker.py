"""`factlab check`, `factlab.check` and `factlab.Checker` on real pairs (a cut of QAGS-XSum, tests/fixtures), with a
tiny seeded aligner saved as a checker folder; the smoke run compares them with the pipeline's own score files
(tests/smoke_check.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import roc_curve
from tiny_aligner import tiny_aligner

import factlab
from factlab.checker.folder import CARD_FILE, CheckerSettings
from factlab.checker.inputs import Columns, read_pairs
from factlab.data.judgeable import NO_WORDS_IN_OUTPUT, NO_WORDS_IN_SOURCE, NOT_ENGLISH, judge_flags
from factlab.errors import DataErrors, FactlabError
from factlab.models.aligner import AlignerConfig, new_network, save_aligner
from factlab.preprocess.benchmark import select_examples, sentence_units
from factlab.score.alignscore import AlignScoreSettings, score_benchmark

FIXTURES = Path(__file__).parent / "fixtures"
PAIRS = FIXTURES / "byo_qags_xsum_head.jsonl"  # six real QAGS-XSum (document, summary) pairs with ids and labels
COLUMNS = ["--source-column", "document", "--output-column", "summary", "--label-column", "faithful"]
SETTINGS = CheckerSettings(words_per_chunk=60, aggregation="min", support_head="three_way", threshold=0.37, precision="fp32")


@pytest.fixture(scope="module")
def checker_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("checker")
    scorer = tiny_aligner(5)
    save_aligner(scorer.network, scorer.tokenizer, folder, {"backbone": "minilm"})
    (folder / CARD_FILE).write_text(json.dumps(SETTINGS.as_json()))
    return folder


@pytest.fixture(scope="module")
def upstream() -> pd.DataFrame:
    return pd.read_json(PAIRS, lines=True)


def fixture_examples(upstream: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fixture pairs as a benchmark's examples (each its own document) and their sentence units, as the
    pipeline's AlignScore reads them."""
    frame = pd.DataFrame(
        {"example_id": upstream["id"], "doc_id": upstream["id"], "source": upstream["document"], "output": upstream["summary"]}
    )
    examples = select_examples(frame, "fixture")
    return examples, sentence_units(examples, "fixture")[0]


def run_check(*arguments: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "factlab", "check", *map(str, arguments)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_check_equals_the_pipeline_scorer(checker_dir: Path, upstream: pd.DataFrame) -> None:
    """The library's scores are AlignScore's, as `factlab score alignscore` computes them with the folder's reading."""
    frame = factlab.check(upstream["document"].tolist(), upstream["summary"].tolist(), ids=upstream["id"], model=checker_dir)
    examples, sentences = fixture_examples(upstream)
    scorer = tiny_aligner(5)
    expected, _ = score_benchmark(examples, sentences, scorer, AlignScoreSettings(60, "reference", "min", "three_way"))
    merged = frame.merge(expected, left_on="id", right_on="example_id", suffixes=("", "_pipeline"))
    assert len(merged) == len(upstream)
    np.testing.assert_allclose(merged["score"], merged["score_pipeline"], atol=1e-5)
    assert (frame["consistent"] == (frame["score"] >= 0.37)).all()
    assert frame["reliable"].all() and not frame["flags"].map(bool).any()


def test_checker_loads_once_and_scores_many(checker_dir: Path, upstream: pd.DataFrame) -> None:
    checker = factlab.Checker(model=checker_dir)
    whole = checker.check(upstream["document"], upstream["summary"])
    first = checker.check(upstream["document"].head(2), upstream["summary"].head(2))
    np.testing.assert_allclose(first["score"], whole["score"].head(2), atol=1e-5)
    assert checker.threshold == 0.37


def test_an_outputs_correction_does_not_depend_on_the_other_rows_of_the_call(
    checker_dir: Path, upstream: pd.DataFrame, tmp_path: Path
) -> None:
    """An output with spans gets its corrected text (itself where no edit helps), one without spans none, whether it is
    checked alone or with rows that offer candidate edits. At token threshold 0 each output is one span from its first
    word; the last fixture pair's offers no edit (no deletion of a sentence's opening, no name or number to replace),
    the others do."""
    torch.manual_seed(5)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=256, token_head=True))
    save_aligner(network, tokenizer, tmp_path, {"backbone": "minilm", "token_head": True})
    (tmp_path / CARD_FILE).write_text(json.dumps(replace(SETTINGS, token_threshold=0.0).as_json()))
    checker = factlab.Checker(model=tmp_path, progress=False)
    whole = checker.check(upstream["document"], upstream["summary"])
    assert whole["spans"].map(bool).all(), "threshold 0: every word is marked"
    for position, (correction, output) in enumerate(zip(whole["correction"], upstream["summary"], strict=True)):
        assert set(correction) == {"text", "edits"}
        assert bool(correction["edits"]) == (correction["text"] != output)
        alone = checker.check(upstream["document"].iloc[[position]], upstream["summary"].iloc[[position]])
        assert alone["correction"].iloc[0] == correction
    # an aligner without a token head marks no words: no spans, no correction
    plain = factlab.Checker(model=checker_dir, progress=False).check(upstream["document"], upstream["summary"])
    assert not plain["spans"].map(bool).any() and plain["correction"].isna().all()


def test_command_writes_one_object_per_row_with_offsets_and_evidence(
    checker_dir: Path, upstream: pd.DataFrame, tmp_path: Path
) -> None:
    out = tmp_path / "scores.jsonl"
    done = run_check(PAIRS, "-o", out, "--model", checker_dir, *COLUMNS)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["id"] for row in rows] == upstream["id"].tolist()
    assert [row["label"] for row in rows] == upstream["faithful"].tolist()
    for row, source, output in zip(rows, upstream["document"], upstream["summary"], strict=True):
        assert 0.0 <= row["score"] <= 1.0 and row["threshold"] == 0.37
        assert row["sentences"], row
        for sentence in row["sentences"]:
            assert output[sentence["start"] : sentence["end"]] == sentence["text"]
            assert 0 <= sentence["evidence_start"] < sentence["evidence_end"] <= len(source)
        assert min(s["support"] for s in row["sentences"]) == pytest.approx(row["score"], abs=1e-6)  # aggregation: min
    assert "factlab check: 6 rows" in done.stderr


def test_every_bad_record_is_reported_at_once_and_nothing_is_written(
    checker_dir: Path, upstream: pd.DataFrame, tmp_path: Path
) -> None:
    records = upstream.to_dict("records")
    records[1]["summary"] = "   "
    records[3]["document"] = None
    records[4]["id"] = records[0]["id"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(record) + "\n" for record in records))
    out = tmp_path / "scores.jsonl"
    done = run_check(bad, "-o", out, "--model", checker_dir, *COLUMNS)
    assert done.returncode == 1 and not out.exists()
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("factlab: error: 3 bad record(s)") and str(bad) in lines[-1]
    assert "record line 2, field 'summary': output is empty (whitespace only)" in done.stderr
    assert "record line 4, field 'document': source is empty" in done.stderr
    assert "record line 5, field 'id': id 'qx0' repeats the id of line 1" in done.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "file has no records"),
        ('[{"document": "a", "summary": "b"}]\n', "malformed JSON line|not an object"),
        ('{"document": "Police said", "summary": "x"\n', "malformed JSON line"),
    ],
)
def test_unreadable_files_fail_naming_the_file(content: str, message: str, tmp_path: Path) -> None:
    bad = tmp_path / "pairs.jsonl"
    bad.write_text(content)
    with pytest.raises(FactlabError, match=message):
        read_pairs(bad, Columns("document", "summary"))


def test_missing_column_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(FactlabError, match="no column 'source'.*--source-column"):
        read_pairs(PAIRS)


def test_inputs_it_cannot_judge_are_flagged(checker_dir: Path, upstream: pd.DataFrame) -> None:
    source, output = upstream["document"][0], upstream["summary"][0]
    chinese = "一辆安保车在格拉斯哥市中心的苏格兰皇家银行分行外被抢劫。"
    assert judge_flags(source, output) == []
    assert judge_flags(source, chinese) == [NOT_ENGLISH]
    assert judge_flags("... !!! ---", output) == [NO_WORDS_IN_SOURCE]
    assert judge_flags("2014 2015 2016: 4.5, 7.25", output) == [NO_WORDS_IN_SOURCE]
    french = "La police a déclaré que trois hommes armés ont pris une somme à cinq chiffres du véhicule dans la rue lundi soir."
    assert judge_flags(french, output) == [NOT_ENGLISH]
    frame = factlab.check([source, source, "... !!!"], [output, chinese, output], model=checker_dir)
    assert frame["reliable"].tolist() == [True, False, False]
    assert frame["score"].notna().tolist() == [True, True, False]  # not English: scored, unreliable; no words: no score
    assert frame["flags"].tolist() == [[], [NOT_ENGLISH], [NO_WORDS_IN_SOURCE]]
    assert judge_flags(source, "?!") == [NO_WORDS_IN_OUTPUT]


def test_python_inputs_are_checked_at_once(checker_dir: Path) -> None:
    with pytest.raises(DataErrors) as error:
        factlab.check(["a text", "", None], ["x", "y", "z"], model=checker_dir)  # type: ignore[list-item]
    assert error.value.details == ["sources[1] is empty", "sources[2] is empty (an empty cell, null or absent)"]
    with pytest.raises(FactlabError, match="one string"):
        factlab.check("a source", "an output", model=checker_dir)  # type: ignore[arg-type]
    with pytest.raises(FactlabError, match="differ in length"):
        factlab.check(["a"], ["b", "c"], model=checker_dir)


def test_without_a_model_the_error_says_how_to_get_one(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "factlab", "check", str(PAIRS.resolve()), "-o", "out.jsonl", *COLUMNS],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("factlab: error: no trained checker at results/checker/model/")
    assert "make checker" in last and "make run" in last and "--model" in last and "make pull" not in last


def test_package_threshold_maximises_validation_balanced_accuracy(tmp_path: Path) -> None:
    """The packaged threshold against scikit-learn's ROC curve: the best (TPR + TNR) / 2 over its thresholds."""
    from factlab.checker.pipeline.package_command import pooled_threshold, read_validation

    rng = np.random.default_rng(7)
    paths = {"scores": [], "data": []}
    frames = []
    for name in ("summac_factcc", "summac_summeval"):
        labels = rng.integers(0, 2, 40)
        scores = np.clip(0.3 * labels + rng.normal(0.4, 0.2, 40), 0, 1).round(3)
        ids = [f"{name}-{i}" for i in range(40)]
        (tmp_path / name).mkdir()
        pd.DataFrame({"example_id": ids, "score": scores}).to_parquet(tmp_path / name / "alignscore.parquet")
        pd.DataFrame({"example_id": ids, "label": labels}).to_parquet(tmp_path / f"{name}.parquet")
        paths["scores"].append(str(tmp_path / name / "alignscore.parquet"))
        paths["data"].append(str(tmp_path / f"{name}.parquet"))
        frames.append((labels, scores))
    tables = read_validation(paths["scores"], paths["data"])
    threshold, chosen_on = pooled_threshold(tables)
    labels = np.concatenate([f[0] for f in frames])
    scores = np.concatenate([f[1] for f in frames])
    fpr, tpr, cuts = roc_curve(labels, scores)
    best = ((tpr + 1 - fpr) / 2).max()
    predicted = (scores >= threshold).astype(int)
    achieved = ((predicted[labels == 1] == 1).mean() + (predicted[labels == 0] == 0).mean()) / 2
    assert achieved == pytest.approx(best, abs=1e-12)
    assert chosen_on["pairs"] == 80 and chosen_on["balanced_accuracy"] == pytest.approx(best, abs=1e-4)
    assert "uncertain_band" not in chosen_on
    # with a precision target, the band on the pooled pairs: each verdict outside it reaches the target there
    _, banded = pooled_threshold(tables, uncertain_precision=0.75)
    low, high = banded["uncertain_band"]
    assert low <= threshold <= high
    if high <= 1:  # the lowest such cut at or above the threshold: every lower one misses the target
        assert labels[scores >= high].mean() >= 0.75
        lower = np.unique(scores[(scores >= threshold) & (scores < high)])
        assert all(labels[scores >= cut].mean() < 0.75 for cut in lower)
    if low > 0:
        assert 1 - labels[scores < low].mean() >= 0.75
    assert banded["coverage"] == pytest.approx(((scores >= high) | (scores < low)).mean(), abs=1e-4)


def test_export_loads_in_plain_transformers_with_the_same_probabilities(
    checker_dir: Path, upstream: pd.DataFrame, tmp_path: Path
) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    out = tmp_path / "exported"
    done = subprocess.run(
        [sys.executable, "-m", "factlab", "export", str(checker_dir), str(out)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    model = AutoModelForSequenceClassification.from_pretrained(out, trust_remote_code=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(out, trust_remote_code=True)
    premises = [document.split(". ")[0] for document in upstream["document"]]  # short pairs: nothing is cut
    encoded = tokenizer(premises, upstream["summary"].tolist(), padding=True, return_tensors="pt")
    reference = tiny_aligner(5)
    with torch.no_grad():
        exported = torch.softmax(model(**encoded).logits, dim=-1)
        expected = reference.probabilities(encoded["input_ids"], encoded["attention_mask"], encoded.get("token_type_ids"))
    torch.testing.assert_close(exported, expected, atol=1e-6, rtol=0)
    classify = pipeline("text-classification", model=str(out), tokenizer=tokenizer, trust_remote_code=True, top_k=None)
    result = {item["label"]: item["score"] for item in classify({"text": premises[0], "text_pair": upstream["summary"][0]})}
    assert [result[label] for label in ("entailment", "neutral", "contradiction")] == pytest.approx(
        expected[0].tolist(), abs=1e-6
    )


def test_a_failed_folder_build_leaves_the_old_folder_and_no_staging(tmp_path: Path) -> None:
    from factlab.io import atomic_folder

    out = tmp_path / "model"
    out.mkdir()
    (out / "weights").write_text("old")
    with pytest.raises(RuntimeError), atomic_folder(out) as staging:
        (staging / "weights").write_text("half")
        raise RuntimeError("the build failed")
    assert (out / "weights").read_text() == "old"
    assert [path.name for path in tmp_path.iterdir()] == ["model"]
    with atomic_folder(out) as staging:
        (staging / "weights").write_text("new")
    assert (out / "weights").read_text() == "new" and [path.name for path in tmp_path.iterdir()] == ["model"]

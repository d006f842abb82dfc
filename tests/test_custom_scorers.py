"""A user's scorer entry (scorers.custom) checked before any job, and the `python` door's job on real pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from factlab.cli import main
from factlab.data.adapters.frank import adapt_frank
from factlab.download.manifest import RawFiles
from factlab.errors import ConfigError
from factlab.score.custom_scorers import check_custom_scorers, custom_scorers, python_target_problem

TESTS = Path(__file__).parent
BUILTIN = ["alignscore", "rouge"]


def test_every_bad_entry_is_named_at_once() -> None:
    entries = {
        "rouge": {"scores": {"frank": "x.jsonl"}},
        "Bad-Name": {"python": "m:f"},
        "two_doors": {"python": "m:f", "model": "x"},
        "no_door": {"higher_is_consistent": True},
        "typo": {"python": "m:f", "batch": 3},
        "bad_family": {"model": "x", "family": "t5"},
        "bad_flag": {"scores": {"frank": "x.jsonl"}, "allow_missing": "yes"},
    }
    with pytest.raises(ConfigError) as raised:
        custom_scorers(entries, BUILTIN)
    message = str(raised.value)
    for expected in (
        "scorers.custom.rouge: 'rouge' is a built-in scorer's name",
        "scorers.custom.Bad-Name: a scorer's name is lower-case",
        "scorers.custom.two_doors: give exactly one of scores, python, model (got python, model)",
        "scorers.custom.no_door: give exactly one of scores, python, model (got none)",
        "scorers.custom.typo.batch: not a key of a `python` scorer",
        "scorers.custom.bad_family.family: one of nli, alignscore, got 't5'",
        "scorers.custom.bad_flag.allow_missing: true or false, got 'yes'",
    ):
        assert expected in message


def test_a_python_target_is_found_without_importing_it() -> None:
    assert python_target_problem(f"{TESTS}/user_scorer.py:word_support") is None
    assert python_target_problem("json:dumps") is None
    assert "defines no 'nothing'" in str(python_target_problem(f"{TESTS}/user_scorer.py:nothing"))
    assert "not found" in str(python_target_problem("tests/none.py:f"))
    assert "cannot be imported" in str(python_target_problem("no_such_package_xyz.module:f"))


def write_benchmark(folder: Path, rows: pd.DataFrame, name: str) -> Path:
    path = folder / f"{name}.parquet"
    rows.to_parquet(path, index=False)
    return path


def test_score_file_problems_stop_before_any_job(tmp_path: Path, frank_table: pd.DataFrame) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    write_benchmark(data_dir, frank_table, "frank")
    ids = list(frank_table["example_id"])
    lines = [json.dumps({"example_id": example_id, "score": 0.5 + index / 100}) for index, example_id in enumerate(ids)]
    lines[1] = json.dumps({"example_id": ids[0], "score": 0.1})  # a duplicate, and ids[1] is left missing
    lines[2] = '{"example_id": "' + ids[2] + '", "score": NaN}'
    lines[3] = json.dumps({"example_id": "frank-unknown", "score": 0.3})
    lines[4] = json.dumps({"example_id": ids[4], "score": "high"})
    scores = tmp_path / "mine.jsonl"
    scores.write_text("\n".join(lines) + "\n")
    scorers = custom_scorers({"mine": {"scores": {"frank": str(scores), "summeval": str(tmp_path / "none.jsonl")}}}, BUILTIN)
    with pytest.raises(ConfigError) as raised:
        check_custom_scorers(scorers, ["frank"], data_dir=data_dir)
    message = str(raised.value)
    for expected in (
        "'summeval' is not a scored benchmark",
        "line 2, field 'example_id': '" + ids[0] + "' is given twice (first at line 1)",
        "line 3, field 'score': nan is not a finite number",
        "line 4, field 'example_id': 'frank-unknown' is not an example of frank",
        "line 5, field 'score': 'high' is not a finite number",
        "examples of frank have no score",
        "nothing was run",
    ):
        assert expected in message, expected


def test_a_constant_scorer_is_a_warning(tmp_path: Path, frank_table: pd.DataFrame) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    write_benchmark(data_dir, frank_table, "frank")
    scores = tmp_path / "flat.csv"
    pd.DataFrame({"example_id": frank_table["example_id"], "score": 0.5}).to_csv(scores, index=False)
    scorers = custom_scorers({"flat": {"scores": {"frank": str(scores)}}}, BUILTIN)
    warnings = check_custom_scorers(scorers, ["frank"], data_dir=data_dir).warnings
    assert warnings == ["scorers.custom.flat: every score is 0.5: a constant scorer ranks nothing (AUC 0.5)"]


@pytest.fixture(scope="module")
def frank_table(raw: RawFiles) -> pd.DataFrame:
    """20 real FRANK pairs, as the data stage builds them."""
    return adapt_frank(raw).frame.head(20).reset_index(drop=True)


@pytest.fixture(scope="module")
def frank_built(tmp_path_factory: pytest.TempPathFactory, frank_table: pd.DataFrame) -> tuple[Path, Path]:
    """The 20 FRANK pairs as a built benchmark table and its sentence units (the preprocess stage's function)."""
    from factlab.preprocess.benchmark import select_examples, sentence_units

    folder = tmp_path_factory.mktemp("frank")
    data = write_benchmark(folder, frank_table, "frank")
    sentences, _ = sentence_units(select_examples(frank_table, "frank"), "frank", progress=False)
    sentences.to_parquet(folder / "sentences.parquet", index=False)
    return data, folder / "sentences.parquet"


def python_job(frank_built: tuple[Path, Path], out: Path, function: str, *extra: str) -> int:
    data, sentences = frank_built
    return main(
        ["score", "python", "--scorer", "mine", "--benchmark", "frank", "--data", str(data), "--sentences", str(sentences),
         "--max-examples", "all", "--sample-examples", "all", "--shard", "0", "--shards", "1", "--function", function,
         "--batch-size", "6", "--higher-is-consistent", "true", "--threads", "1", "--out", str(out / "s.parquet"),
         "--report", str(out / "s.json"), *extra]
    )  # fmt: skip


def test_a_python_scorer_scores_every_pair_with_its_spans(tmp_path: Path, frank_built: tuple[Path, Path]) -> None:
    from user_scorer import word_support

    assert python_job(frank_built, tmp_path, f"{TESTS}/user_scorer.py:word_support") == 0
    table = pd.read_parquet(tmp_path / "s.parquet")
    examples = pd.read_parquet(frank_built[0]).sort_values("example_id")
    expected = word_support(list(examples["source"]), list(examples["output"]))
    assert list(table["example_id"]) == list(examples["example_id"])
    assert table["score"].tolist() == [record["score"] for record in expected]
    for units, record, output in zip(table["units"], expected, examples["output"], strict=True):
        spans = [[int(start), int(end)] for unit in units for start, end in unit["output_spans"]]
        assert spans == record["spans"]
        assert all(not output[start:end].isspace() and output[start:end] for start, end in spans)
        assert all(unit["score"] == 0.0 for unit in units)


def failing_scorer(sources: list[str], outputs: list[str]) -> list[float]:
    raise RuntimeError("out of memory")


def short_scorer(sources: list[str], outputs: list[str]) -> list[float]:
    return [0.5] * (len(outputs) - 1)


def nan_scorer(sources: list[str], outputs: list[str]) -> list[float]:
    return [float("nan")] * len(outputs)


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("failing_scorer", "failed on 6 examples of frank (the first: 'frank-"),
        ("short_scorer", "returned 5 results for 6 pairs"),
        ("nan_scorer", "score nan is not a finite number"),
    ],
)
def test_a_failing_callable_fails_its_shard_naming_the_examples(
    tmp_path: Path, frank_built: tuple[Path, Path], function: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert python_job(frank_built, tmp_path, f"{__file__}:{function}") != 0
    assert message in capsys.readouterr().err
    assert not (tmp_path / "s.parquet").exists() and not (tmp_path / "s.json").exists()


def test_a_checked_entry_is_read_again_once_its_file_changes(tmp_path: Path, frank_table: pd.DataFrame) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    write_benchmark(data_dir, frank_table, "frank")
    scores, cache = tmp_path / "mine.csv", tmp_path / "checked.json"
    pd.DataFrame({"example_id": frank_table["example_id"], "score": range(len(frank_table))}).to_csv(scores, index=False)
    scorers = custom_scorers({"mine": {"scores": {"frank": str(scores)}}}, BUILTIN)
    assert check_custom_scorers(scorers, ["frank"], data_dir=data_dir, cache=cache).warnings == []
    assert json.loads(cache.read_text())["mine"]["localises"] is False
    scores.write_text(scores.read_text() + "frank-unknown,3\n")
    with pytest.raises(ConfigError, match="'frank-unknown' is not an example of frank"):
        check_custom_scorers(scorers, ["frank"], data_dir=data_dir, cache=cache)

"""The `scores` door end to end, with real released scores standing in for a researcher's own metric.

A user brings per-example scores computed elsewhere; `factlab score import` turns each file into the score table
every built-in scorer writes, and the meta-evaluation reads it as any scorer's. Here the user's scores are
published ones, so the numbers factlab gives through the door can be checked against references that do not go
through factlab's code:

1. SCALE's released TRUE scores (UniEval, SummaC-ZS, SummaC-Conv, BERTScore-F on TRUE's sets, listed in TRUE's
   order with their labels): aligned by position to the `true_<set>` tables as a user would (labels checked row by
   row), imported, and put through `factlab metaeval detection`: every AUC equals scikit-learn's on the raw JSON's
   lists, and that of factlab's published-TRUE analysis.
2. FRANK's released baseline outputs imported as a user's scorer: `factlab metaeval frank-scorers` gives the partial
   correlations `factlab metaeval frank-correlations` gives the same metric, scipy's on system-demeaned values, and
   those of the FRANK table in paper/tables/frank_baselines.md (two decimals).
3. A bad file is refused with every problem named, and nothing written; `--allow-missing` counts what is missing.
4. `--higher-is-consistent false` flips scores as 1 - s within [0, 1], else as -s: sklearn's AUC becomes 1 - AUC.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from factlab.cli import main
from factlab.data.adapters.frank import BASELINES_FILE, adapt_frank, adapt_frank_baselines, frank_example_id
from factlab.data.adapters.scale_published import SPECS as PUBLISHED_SPECS
from factlab.data.adapters.scale_published import TRUE_SETS, adapt_true_published
from factlab.data.adapters.true import MIRRORED_SETS, adapt_true
from factlab.data.schema import validate_benchmark, validate_table
from factlab.metaeval.analyses import detection_command as detection_module
from factlab.metaeval.analyses.published.true_published_command import detection_table
from factlab.preprocess.benchmark import SENTENCE_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
SCALE = "scale_score_reference_outputs"
METRICS = ("unieval", "summac_zs", "summac_conv", "bert_score_f")
SETS = MIRRORED_SETS  # all 8 mirrored TRUE sets (fever, mnbm and vitc are not mirrored)
UPSTREAM_KEY = {true_set: key for key, true_set in TRUE_SETS.items()}
# FRANK's table prints coefficients to two decimals (factlab.paper.frank_command.marked, FRANK's paper)
FRANK_DECIMALS = 2
FRANK_TABLE = ROOT / "paper" / "tables" / "frank_baselines.md"
SUBSETS = ("all", "cnndm", "xsum")
# auc.csv is written with float_format "%.6g": an AUC in [0.1, 1) keeps 6 decimals
CSV_HALF_UNIT = 0.5e-6


# --- what a user does ---------------------------------------------------------------------------------------------


def released_true(raw, metric: str) -> dict[str, list[list[float]]]:
    """SCALE's released {upstream set: [scores, labels]} of one metric, read straight from the JSON."""
    with open(raw.path(SCALE, f"experiments/true/results/{metric}_true_results.json"), encoding="utf-8") as handle:
        return json.load(handle)


def empty_sentences(path: Path) -> Path:
    """A sentence-units file with the columns `factlab preprocess sentences` writes and no rows: the import reads it
    only for sentence_scores, which these files do not give."""
    pd.DataFrame({column: pd.Series(dtype=dtype) for column, dtype in SENTENCE_COLUMNS.items()}).to_parquet(path)
    return path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def import_scores(
    results: Path,
    scorer: str,
    benchmark: str,
    scores: Path,
    sentences: Path,
    *,
    higher_is_consistent: bool = True,
    allow_missing: bool = False,
    out_dir: Path | None = None,
) -> tuple[int, Path, Path]:
    """`factlab score import` as the workflow's rule runs it: (exit code, score table, report); the table is
    results/score/<benchmark>/<scorer>.parquet unless `out_dir` is given."""
    out_dir = out_dir or results / "score" / benchmark
    out, report = out_dir / f"{scorer}.parquet", out_dir / f"{scorer}.import.json"
    command = [
        "score", "import", "--scorer", scorer, "--benchmark", benchmark,
        "--data", str(results / "data" / f"{benchmark}.parquet"), "--sentences", str(sentences),
        "--max-examples", "all", "--scores", str(scores),
        "--higher-is-consistent", "true" if higher_is_consistent else "false",
        *(["--allow-missing"] if allow_missing else []), "--out", str(out), "--report", str(report),
    ]  # fmt: skip
    return main(command), out, report


def build_true_table(raw, results: Path, true_set: str) -> pd.DataFrame:
    """results/data/true_<set>.parquet, as `factlab data build` writes it."""
    table = validate_benchmark(adapt_true(raw, true_set).frame, f"true_{true_set}")
    path = results / "data" / f"true_{true_set}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(path, index=False)
    return table


# --- 1. SCALE's released TRUE scores through the door --------------------------------------------------------------


@pytest.fixture(scope="module")
def true_door(raw, tmp_path_factory):
    """Every (metric, set) imported as a user's file and evaluated by one `factlab metaeval detection` run; the table
    detection computes is also kept at full precision (auc.csv rounds to 6 significant digits)."""
    results = tmp_path_factory.mktemp("true_door") / "results"
    sentences = empty_sentences(results.parent / "sentences.parquet")
    released = {metric: released_true(raw, metric) for metric in METRICS}
    tables, imported = {}, []
    for true_set in SETS:
        table = build_true_table(raw, results, true_set)
        tables[true_set] = table
        # the examples in the table's order: `factlab benchmarks export` lists them so
        ids, labels = table["example_id"].tolist(), table["label"].astype(int).tolist()
        for metric in METRICS:
            scores, released_labels = released[metric][UPSTREAM_KEY[true_set]]
            # the user's alignment check: same length, same label at every position
            assert len(scores) == len(ids), (metric, true_set)
            assert released_labels == labels, (metric, true_set)
            file = write_jsonl(
                results.parent / "user" / f"{metric}_{true_set}.jsonl",
                [{"example_id": i, "score": s} for i, s in zip(ids, scores, strict=True)],
            )
            code, out, report = import_scores(results, metric, f"true_{true_set}", file, sentences)
            assert code == 0, (metric, true_set)
            imported.append(out)
    captured = {}
    original = detection_module.compare_with_best

    def keep(table, *args, **kwargs):
        captured["table"] = original(table, *args, **kwargs)
        return captured["table"]

    out = results / "metaeval" / "true"
    command = [
        "metaeval", "detection", "--scores", *map(str, imported),
        "--data", *(str(results / "data" / f"true_{s}.parquet") for s in SETS),
        "--resamples", "20", "--confidence", "0.95", "--seed", "2022", "--ece-bins", "15", "--reliability-bins", "10",
        "--out", str(out / "auc.csv"), "--out-reliability", str(out / "reliability.csv"),
        "--report", str(out / "thresholds.json"), "--out-metrics", str(out / "metrics.json"),
    ]  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(detection_module, "compare_with_best", keep)
        assert main(command) == 0
    return {
        "released": released,
        "tables": tables,
        "auc_csv": pd.read_csv(out / "auc.csv").set_index(["scorer", "benchmark"]),
        "auc_full": captured["table"].set_index(["scorer", "benchmark"]),
        "imported": imported,
    }


def sklearn_auc(released, metric: str, true_set: str) -> float:
    scores, labels = released[metric][UPSTREAM_KEY[true_set]]
    return float(roc_auc_score(labels, scores))


def test_imported_tables_hold_the_released_scores_unchanged(true_door):
    for path in true_door["imported"]:
        metric, benchmark = path.stem, path.parent.name
        table = pd.read_parquet(path)
        scores, _ = true_door["released"][metric][UPSTREAM_KEY[benchmark.removeprefix("true_")]]
        by_position = true_door["tables"][benchmark.removeprefix("true_")]["example_id"]
        expected = pd.Series(scores, index=by_position)
        assert list(table.columns) == ["example_id", "score", "n_sentences"]
        assert table["example_id"].is_monotonic_increasing and len(table) == len(expected)
        assert table["score"].tolist() == expected.loc[table["example_id"]].tolist()  # bit for bit


def test_detection_auc_of_every_imported_table_equals_sklearn_on_the_raw_json(true_door):
    csv, full, released = true_door["auc_csv"], true_door["auc_full"], true_door["released"]
    assert len(csv) == len(METRICS) * len(SETS) and (csv["n_unscored"] == 0).all()
    differences = []
    for metric in METRICS:
        for true_set in SETS:
            expected = sklearn_auc(released, metric, true_set)
            key = (metric, f"true_{true_set}")
            assert csv.loc[key, "n"] == len(released[metric][UPSTREAM_KEY[true_set]][0])
            assert full.loc[key, "roc_auc"] == pytest.approx(expected, abs=1e-9)
            assert abs(csv.loc[key, "roc_auc"] - expected) <= CSV_HALF_UNIT + 1e-12
            differences.append(abs(full.loc[key, "roc_auc"] - expected))
    assert max(differences) < 1e-9


def test_detection_auc_equals_factlab_s_published_true_analysis(raw, true_door):
    spec = {spec.name: spec for spec in PUBLISHED_SPECS}["true_published"]
    published = validate_table(adapt_true_published(raw).frame, spec.name, spec.required, spec.unique)
    table = detection_table(published, ece_bins=15).set_index(["metric", "dataset"])
    full = true_door["auc_full"]
    for metric in METRICS:
        for true_set in SETS:
            assert full.loc[(metric, f"true_{true_set}"), "roc_auc"] == pytest.approx(
                table.loc[(metric, true_set), "roc_auc"], abs=1e-9
            )


# --- 2. FRANK's released metric outputs through the door -----------------------------------------------------------

FRANK_USER_METRICS = {"bertscore_p": "BertScore P", "rouge_l": "Rouge L"}


@pytest.fixture(scope="module")
def frank_door(raw, tmp_path_factory):
    """FRANK's released `BertScore P` and `Rouge L` imported as two user scorers, then `factlab metaeval frank-scorers`
    and `frank-correlations` as workflow/rules/metaeval.smk runs them (params.yaml's subsets, variant, compared
    metrics)."""
    results = tmp_path_factory.mktemp("frank_door") / "results"
    sentences = empty_sentences(results.parent / "sentences.parquet")
    data = results / "data"
    data.mkdir(parents=True)
    labels = validate_benchmark(adapt_frank(raw).frame, "frank")
    labels.to_parquet(data / "frank.parquet", index=False)
    adapt_frank_baselines(raw).frame.to_parquet(data / "frank_baseline_scores.parquet", index=False)
    with open(raw.path("frank", BASELINES_FILE), encoding="utf-8") as handle:
        outputs = json.load(handle)
    imported = []
    for scorer, metric in FRANK_USER_METRICS.items():
        records = [
            {"example_id": frank_example_id(record["hash"], record["model_name"]), "score": record[metric]} for record in outputs
        ]
        assert all(record["score"] is not None for record in records)  # every summary has both metrics' scores
        file = write_jsonl(results.parent / "user" / f"{scorer}.jsonl", records)
        code, out, _ = import_scores(results, scorer, "frank", file, sentences)
        assert code == 0
        imported.append(out)
    out = results / "metaeval"
    bootstrap = ["--resamples", "20", "--confidence", "0.95", "--seed", "2022"]
    scorers = [
        "metaeval", "frank-scorers", "--benchmark", str(data / "frank.parquet"),
        "--released", str(data / "frank_baseline_scores.parquet"), "--scores", *map(str, imported),
        "--compare", "BertScore P Art", "FactCC", "--subsets", *SUBSETS, "--variant", "frank",
        "--williams-variant", "two_sided", *bootstrap,
        "--out-correlations", str(out / "s" / "correlations.csv"), "--out-williams", str(out / "s" / "williams.csv"),
        "--out-metrics", str(out / "s" / "metrics.json"), "--out-ablation", str(out / "s" / "ablation.csv"),
    ]  # fmt: skip
    baselines = [
        "metaeval", "frank-correlations", "--benchmark", str(data / "frank.parquet"),
        "--scores", str(data / "frank_baseline_scores.parquet"), "--metrics", *FRANK_USER_METRICS.values(),
        "--subsets", *SUBSETS, "--variant", "frank", *bootstrap,
        "--out", str(out / "b" / "correlations.csv"), "--out-test", str(out / "b" / "correlations_test.csv"),
    ]  # fmt: skip
    assert main(scorers) == 0
    assert main(baselines) == 0
    return {
        "labels": labels,
        "outputs": outputs,
        "scorers": pd.read_csv(out / "s" / "correlations.csv").set_index(["metric", "subset"]),
        "baselines": pd.read_csv(out / "b" / "correlations.csv").set_index(["metric", "subset"]),
    }


def frank_table_row(metric: str) -> dict[tuple[str, str], float]:
    """One metric's printed coefficients of paper/tables/frank_baselines.md: {(subset, pearson|spearman): value}."""
    lines = [line.strip().strip("|").split("|") for line in FRANK_TABLE.read_text(encoding="utf-8").splitlines()]
    header = [cell.strip() for cell in lines[0]]
    row = next([cell.strip() for cell in cells] for cells in lines[2:] if cells[0].strip() == metric)
    labels = {"All data": "all", "CNN/DM": "cnndm", "XSum": "xsum"}
    printed = {}
    for name, cell in zip(header[1:], row[1:], strict=True):
        subset_label, _, method = name.rpartition(" ")
        printed[(labels[subset_label], method.lower())] = float(cell.rstrip("*"))
    return printed


@pytest.mark.parametrize("scorer", sorted(FRANK_USER_METRICS))
def test_frank_scorers_give_a_user_s_copy_of_a_released_metric_frank_s_partial_correlations(frank_door, scorer):
    metric = FRANK_USER_METRICS[scorer]
    got, baselines = frank_door["scorers"], frank_door["baselines"]
    printed = frank_table_row(metric)
    labels, outputs = frank_door["labels"], frank_door["outputs"]
    released = pd.Series({frank_example_id(r["hash"], r["model_name"]): r[metric] for r in outputs}, name="score", dtype=float)
    for subset in SUBSETS:
        mine, theirs = got.loc[(f"factlab {scorer}", subset)], baselines.loc[(metric, subset)]
        assert mine["n"] == theirs["n"] == (2246 if subset == "all" else 1250 if subset == "cnndm" else 996)
        for method in ("pearson", "spearman"):
            assert mine[method] == pytest.approx(theirs[method], abs=1e-9)
            assert mine[f"{method}_p"] == pytest.approx(theirs[f"{method}_p"], rel=1e-6)
            # the FRANK table, to its printed precision
            assert round(mine[method], FRANK_DECIMALS) == printed[(subset, method)], (subset, method)
        # and scipy on values minus their system's mean (FRANK's regression on the system), from the raw JSON
        part = labels if subset == "all" else labels[labels["subset"] == subset]
        part = part.assign(score=released.loc[part["example_id"]].to_numpy())
        x = part["score"] - part.groupby("system")["score"].transform("mean")
        y = part["human_score"] - part.groupby("system")["human_score"].transform("mean")
        assert mine["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-9)
        assert mine["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-9)


def test_frank_scorers_compared_metrics_are_frank_s_too(frank_door):
    got = frank_door["scorers"]
    for metric in ("BertScore P Art", "FactCC"):
        printed = frank_table_row(metric)
        for subset in SUBSETS:
            for method in ("pearson", "spearman"):
                assert round(got.loc[(metric, subset), method], FRANK_DECIMALS) == printed[(subset, method)]


# --- 3. a bad file: every problem at once, nothing written ----------------------------------------------------------


@pytest.fixture(scope="module")
def qags_xsum(raw, tmp_path_factory):
    """results/data/true_qags_xsum.parquet and UniEval's released scores of it, as the user's {example_id: score}."""
    results = tmp_path_factory.mktemp("qags_xsum") / "results"
    table = build_true_table(raw, results, "qags_xsum")
    scores, labels = released_true(raw, "unieval")["qags_xsum"]
    assert labels == table["label"].astype(int).tolist()
    records = [{"example_id": i, "score": s} for i, s in zip(table["example_id"], scores, strict=True)]
    return results, table, records, empty_sentences(results.parent / "sentences.parquet")


def test_a_bad_score_file_names_every_problem_and_writes_nothing(qags_xsum, tmp_path, capsys):
    results, table, records, sentences = qags_xsum
    bad = [dict(record) for record in records]
    bad[3]["score"] = float("nan")  # line 4 (json.dumps writes NaN)
    bad[10]["score"] = "high"  # line 11
    bad.pop(20)  # an example left out; the lines after it move up by one
    bad.append({"example_id": records[5]["example_id"], "score": 0.5})  # line 239: a duplicate of line 6
    bad.append({"example_id": "true_qags_xsum-99999", "score": 0.5})  # line 240: no such example
    file = write_jsonl(tmp_path / "unieval.jsonl", bad)
    code, out, report = import_scores(results, "unieval", "true_qags_xsum", file, sentences, out_dir=tmp_path / "score")
    stderr = capsys.readouterr().err
    assert code != 0
    assert not out.exists() and not report.exists()
    assert not out.parent.exists() or not any(out.parent.iterdir())  # no temporary file left either
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("factlab: error: ") and f"file {file}" in last
    for expected in (
        "line 4, field 'score': nan is not a finite number",
        "line 11, field 'score': 'high' is not a finite number",
        f"line 239, field 'example_id': {records[5]['example_id']!r} is given twice (first at line 6)",
        "line 240, field 'example_id': 'true_qags_xsum-99999' is not an example of true_qags_xsum",
        # the NaN and text lines' examples count as unscored beside the one left out
        f"3 of {len(table)} examples of true_qags_xsum have no score",
    ):
        assert expected in stderr, expected
    assert "5 bad record(s)" in last


def test_allow_missing_imports_the_scored_examples_and_counts_the_missing(qags_xsum, tmp_path):
    results, table, records, sentences = qags_xsum
    kept = [record for index, record in enumerate(records) if index not in (0, 100)]
    file = write_jsonl(tmp_path / "unieval.jsonl", kept)
    score = tmp_path / "score"
    code, out, _ = import_scores(results, "unieval", "true_qags_xsum", file, sentences, out_dir=score)
    assert code == 1 and not out.exists()  # refused without --allow-missing
    code, out, report = import_scores(results, "unieval", "true_qags_xsum", file, sentences, allow_missing=True, out_dir=score)
    assert code == 0
    counts = json.loads(report.read_text())
    assert counts["examples"] == len(table) == 239
    assert (counts["examples_missing"], counts["examples_scored"]) == (2, 237)
    imported = pd.read_parquet(out)
    assert len(imported) == 237
    assert set(table["example_id"]) - set(imported["example_id"]) == {records[0]["example_id"], records[100]["example_id"]}
    expected = {record["example_id"]: record["score"] for record in kept}
    assert imported["score"].tolist() == [expected[i] for i in imported["example_id"]]


# --- 4. orientation -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("metric", "how"), [("unieval", "1 - score"), ("summac_zs", "-score")])
def test_lower_is_consistent_scores_are_flipped(raw, qags_xsum, tmp_path, metric, how):
    """UniEval's released scores lie in [0, 1] (flipped as 1 - s); SummaC-ZS's in [-1, 1] (flipped as -s). Either way
    a scorer whose high scores were errors ranks as the mirror image: sklearn's AUC is 1 - the original's."""
    results, table, _, sentences = qags_xsum
    scores, labels = released_true(raw, metric)["qags_xsum"]
    within = all(0.0 <= score <= 1.0 for score in scores)
    assert within == (how == "1 - score")  # the released scores are what the cases say
    file = write_jsonl(
        tmp_path / f"{metric}.jsonl", [{"example_id": i, "score": s} for i, s in zip(table["example_id"], scores, strict=True)]
    )
    code, out, report = import_scores(
        results, metric, "true_qags_xsum", file, sentences, higher_is_consistent=False, out_dir=tmp_path / "score"
    )
    assert code == 0
    assert json.loads(report.read_text())["orientation"] == how
    imported = pd.read_parquet(out).set_index("example_id").loc[table["example_id"], "score"].to_numpy()
    expected = 1.0 - np.asarray(scores) if how == "1 - score" else -np.asarray(scores)
    assert imported.tolist() == expected.tolist()
    original = roc_auc_score(labels, scores)
    assert roc_auc_score(labels, imported) == pytest.approx(1.0 - original, abs=1e-12)
    assert original > 0.6  # a metric that ranks: its flip is a real change

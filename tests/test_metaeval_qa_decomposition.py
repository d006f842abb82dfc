"""QASemConsistency's decomposition (factlab.metaeval.analyses.qa_decomposition_command) on the real benchmark and its gold QAs.

Score tables in the scorer's layout (`units` detail) are made from seeded noise around the labels, so the
expected AUCs come from scikit-learn on a join done here by hand, independently of the module's join.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from factlab.cli import main
from factlab.data.adapters.qasem_consistency import adapt_qas, adapt_responses
from factlab.data.schema import validate_benchmark

RESPONSES = 60  # the first responses of the benchmark (dev and test, all three tasks)


@pytest.fixture(scope="module")
def tables(raw) -> tuple[pd.DataFrame, pd.DataFrame]:
    responses = validate_benchmark(adapt_responses(raw).frame, "qasem_consistency")
    qas = validate_benchmark(adapt_qas(raw).frame, "qasem_consistency_qas")
    return responses, qas


def score_tables(responses: pd.DataFrame, qas: pd.DataFrame) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(7)
    scored = responses.head(RESPONSES)
    gold = qas[qas["doc_id"].isin(set(scored["example_id"]))].copy()
    gold["qa_score"] = np.clip(0.35 * gold["label"].astype(float) + rng.uniform(0, 0.65, len(gold)), 0, 1)
    sentence_score = {
        key: float(rng.uniform()) for key in gold.groupby(["doc_id", "sent_id"]).groups
    }  # unrelated to the QA labels: a sentence-level scorer that knows nothing
    tables: dict[str, list[dict]] = {"gold_qas": [], "parser_qas": [], "sentences": []}
    for response in scored.itertuples():
        own = gold[gold["doc_id"] == response.example_id]
        qa_units = [
            {"unit": "qa", "qa_id": row.example_id, "sentence_index": int(row.sent_id), "score": row.qa_score}
            for row in own.itertuples()
        ]
        sentence_units = [
            {"unit": "sentence", "qa_id": None, "sentence_index": int(index), "score": score}
            for (doc, index), score in sentence_score.items()
            if doc == response.example_id
        ]
        label = float(response.label)
        tables["gold_qas"].append(
            {"example_id": response.example_id, "score": 0.3 * label + rng.uniform(0, 0.7), "units": qa_units}
        )
        tables["parser_qas"].append({"example_id": response.example_id, "score": 0.1 * label + rng.uniform(0, 0.9), "units": []})
        tables["sentences"].append({"example_id": response.example_id, "score": rng.uniform(), "units": sentence_units})
    frames = {name: pd.DataFrame(rows) for name, rows in tables.items()}
    frames["_gold"] = gold.assign(
        sentence_score=[sentence_score[(d, s)] for d, s in zip(gold["doc_id"], gold["sent_id"], strict=True)]
    )
    return frames


def run(tmp_path, responses, qas, frames, names=("gold_qas", "parser_qas", "sentences")) -> int:
    data, gold = tmp_path / "qasem_consistency.parquet", tmp_path / "qasem_consistency_qas.parquet"
    responses.to_parquet(data)
    qas.to_parquet(gold)
    paths = []
    for name in names:
        paths.append(tmp_path / f"qa_decomposition.{name}.parquet")
        frames[name].to_parquet(paths[-1])
    return main(
        ["metaeval", "qa-decomposition", "--data", str(data), "--gold-qas", str(gold),
         "--scores", *(f"{name}={path}" for name, path in zip(names, paths, strict=True)),
         "--resamples", "200", "--confidence", "0.95", "--seed", "1", "--ece-bins", "10",
         "--out-qas", str(tmp_path / "qas.csv"), "--out-responses", str(tmp_path / "responses.csv")]
    )  # fmt: skip


def test_qa_and_response_aucs_equal_sklearn(tmp_path, tables) -> None:
    responses, qas = tables
    frames = score_tables(responses, qas)
    assert run(tmp_path, responses, qas, frames) == 0
    gold = frames["_gold"]
    qa_rows = pd.read_csv(tmp_path / "qas.csv").set_index("task")
    assert qa_rows.loc["all", "qas"] == len(gold) > 100
    assert qa_rows.loc["all", "roc_auc_qa"] == pytest.approx(roc_auc_score(gold["label"], gold["qa_score"]))
    assert qa_rows.loc["all", "roc_auc_sentence"] == pytest.approx(roc_auc_score(gold["label"], gold["sentence_score"]))
    low, high = qa_rows.loc["all", ["difference_low", "difference_high"]]
    assert low <= qa_rows.loc["all", "roc_auc_difference"] <= high and low > 0  # QA scores carry the label, sentences not
    for task, part in gold.groupby("task"):
        assert qa_rows.loc[task, "roc_auc_qa"] == pytest.approx(roc_auc_score(part["label"], part["qa_score"]))
    by_decomposition = pd.read_csv(tmp_path / "responses.csv").set_index(["decomposition", "task"])
    scored = responses.head(RESPONSES)
    for name in ("gold_qas", "parser_qas", "sentences"):
        joined = frames[name].merge(scored[["example_id", "label", "task"]], on="example_id")
        assert by_decomposition.loc[(name, "all"), "n"] == RESPONSES
        assert by_decomposition.loc[(name, "all"), "roc_auc"] == pytest.approx(roc_auc_score(joined["label"], joined["score"]))
        for task, part in joined.groupby("task"):
            if part["label"].nunique() == 2:
                expected = roc_auc_score(part["label"], part["score"])
                assert by_decomposition.loc[(name, task), "roc_auc"] == pytest.approx(expected)


def test_a_missing_decomposition_is_a_one_line_error(tmp_path, tables, capsys) -> None:
    responses, qas = tables
    frames = score_tables(responses, qas)
    assert run(tmp_path, responses, qas, frames, names=("gold_qas", "sentences")) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "parser_qas" in error[0]
    assert not (tmp_path / "qas.csv").exists() and not (tmp_path / "responses.csv").exists()


def test_a_score_table_must_name_its_decomposition(tmp_path, tables, capsys) -> None:
    """The scorer's own table stands for a decomposition only when named: `parser_qas=<path>`."""
    responses, qas = tables
    frames = score_tables(responses, qas)
    frames["parser"] = frames["parser_qas"]
    assert run(tmp_path, responses, qas, frames, names=("gold_qas", "parser", "sentences")) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "DECOMPOSITION=PATH" in error[0] and "parser=" in error[0]
    assert not (tmp_path / "qas.csv").exists()


def test_a_gold_qa_without_its_sentence_score_is_named(tmp_path, tables, capsys) -> None:
    responses, qas = tables
    frames = score_tables(responses, qas)
    first = frames["sentences"].iloc[0]
    frames["sentences"].at[0, "units"] = [unit for unit in first["units"] if unit["sentence_index"] != 0]
    assert run(tmp_path, responses, qas, frames) != 0
    error = capsys.readouterr().err.strip()
    assert "sentence_index" in error and "sentence scores" in error


def test_paper_table_puts_each_decomposition_in_its_column(tmp_path, tables) -> None:
    responses, qas = tables
    frames = score_tables(responses, qas)
    assert run(tmp_path, responses, qas, frames) == 0
    out_md, out_tex = tmp_path / "t.md", tmp_path / "t.tex"
    command = [
        "paper",
        "qa-decomposition-table",
        "--responses",
        str(tmp_path / "responses.csv"),
        "--qas",
        str(tmp_path / "qas.csv"),
    ]
    assert main([*command, "--out-md", str(out_md), "--out-tex", str(out_tex)]) == 0
    from factlab.paper.scorer_tables_command import qa_decomposition_frame

    table = qa_decomposition_frame(pd.read_csv(tmp_path / "responses.csv"), pd.read_csv(tmp_path / "qas.csv")).set_index("task")
    scored = responses.head(RESPONSES)
    joined = frames["parser_qas"].merge(scored[["example_id", "label"]], on="example_id")
    assert table.loc["all", "AUC parser QAs"] == pytest.approx(100 * roc_auc_score(joined["label"], joined["score"]))
    assert table.loc["all", "QAs"] == len(frames["_gold"])
    assert "\\label{tab:qa-decomposition}" in out_tex.read_text() and "| all |" in out_md.read_text()

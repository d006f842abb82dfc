"""QASemConsistency statistics, checked against statsmodels' Fleiss κ and counts recomputed by hand."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from factlab.cli import main
from factlab.data.registry import get_spec
from factlab.metaeval.analyses.published.qasem_consistency_command import STATISTICS_COLUMNS, statistics_table

# Mirror README: responses (Verifiability: sentences) and QA pairs per task.
RESPONSES = {"cliff": 74, "factscore": 36, "verifiability": 189}
QAS = {"cliff": 693, "factscore": 1109, "verifiability": 1296}


@pytest.fixture(scope="module")
def responses(raw) -> pd.DataFrame:
    return get_spec("qasem_consistency").build(raw).frame


@pytest.fixture(scope="module")
def qas(raw) -> pd.DataFrame:
    return get_spec("qasem_consistency_qas").build(raw).frame


@pytest.fixture(scope="module")
def statistics(responses, qas) -> pd.DataFrame:
    return statistics_table(responses, qas).set_index("task")


def reference_kappa(votes: list) -> float:
    table, _ = aggregate_raters(np.stack([np.asarray(v) for v in votes]))
    return float(statsmodels_fleiss_kappa(table, method="fleiss"))


def test_columns_and_counts_match_the_mirror(statistics, responses):
    assert ["task", *statistics.columns] == STATISTICS_COLUMNS
    assert statistics["responses"].to_dict() == RESPONSES
    assert statistics["qas"].to_dict() == QAS
    sentences = responses.groupby("task")["sentences"].apply(lambda s: sum(len(x) for x in s))
    assert statistics["sentences"].to_dict() == sentences.to_dict()
    assert np.allclose(statistics["qas_per_sentence"], statistics["qas"] / statistics["sentences"])


def test_kappas_match_statsmodels(statistics, responses, qas):
    for task in RESPONSES:
        task_qas = qas[qas["task"] == task]
        assert statistics.loc[task, "fleiss_kappa"] == pytest.approx(reference_kappa(list(task_qas["votes"])), abs=1e-12)
        spans = [v for row in responses.loc[responses["task"] == task, "span_votes"] for v in row]
        assert statistics.loc[task, "fleiss_kappa_spans"] == pytest.approx(reference_kappa(spans), abs=1e-12)


def test_shares_recomputed_from_the_votes(statistics, qas):
    for task in RESPONSES:
        task_qas = qas[qas["task"] == task]
        majority_supported = [int(sum(v) >= 2) for v in task_qas["votes"]]  # 3 votes, 1 = supported
        assert statistics.loc[task, "unsupported_share"] == pytest.approx(1 - np.mean(majority_supported))
        labels_by_predicate: dict[tuple, list[int]] = defaultdict(list)
        for doc_id, index, label in zip(task_qas["doc_id"], task_qas["predicate_idx"], majority_supported, strict=True):
            labels_by_predicate[(doc_id, index)].append(label)
        several = [labels for labels in labels_by_predicate.values() if len(labels) >= 2]
        mixed = sum(1 for labels in several if len(set(labels)) == 2)
        assert statistics.loc[task, "mixed_predicate_share"] == pytest.approx(mixed / len(several))


def test_cli_writes_statistics_table_and_metrics(responses, qas, tmp_path):
    responses_path, qas_path = tmp_path / "responses.parquet", tmp_path / "qas.parquet"
    responses.to_parquet(responses_path)
    qas.to_parquet(qas_path)
    out, md, tex = tmp_path / "out", tmp_path / "q.md", tmp_path / "q.tex"
    args = ["metaeval", "qasem-consistency", "--responses", str(responses_path), "--qas", str(qas_path)]
    assert main([*args, "--out-dir", str(out)]) == 0
    assert pd.read_csv(out / "statistics.csv").columns.tolist() == STATISTICS_COLUMNS
    table = ["paper", "qasem-consistency-table", "--statistics", str(out / "statistics.csv")]
    assert main([*table, "--out-md", str(md), "--out-tex", str(tex)]) == 0
    assert (out / "metrics.json").is_file() and md.read_text().count("\n") == 5  # header, rule, 3 tasks
    assert "\\label{tab:qasem-consistency}" in tex.read_text()

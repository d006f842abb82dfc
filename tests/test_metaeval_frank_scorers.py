"""factlab's scorers on FRANK (factlab.metaeval.analyses.frank_scorers_command), checked with FRANK's released scores
posing as scorers.

A score table holding FRANK's released FactCC scores must get exactly the partial correlation
FRANK's own table gives FactCC (rebuilt by factlab.metaeval.analyses.published.frank_command, itself checked against
scipy and pingouin in test_published_frank.py), and its Williams test against BERTScore-P-Art the
same numbers as the released pair.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from factlab.cli import main
from factlab.data.adapters.frank import adapt_frank, adapt_frank_baselines
from factlab.errors import FactlabError
from factlab.metaeval.analyses.frank_scorers_command import with_scorer_columns
from factlab.metaeval.analyses.published import frank_command as published
from factlab.paper import frank_figures as published_figures
from factlab.sampling import sample_examples


@pytest.fixture(scope="module")
def tables(raw) -> tuple[pd.DataFrame, pd.DataFrame]:
    return adapt_frank(raw).frame, adapt_frank_baselines(raw).frame


def run(
    tmp_path,
    labels,
    released,
    scorers: dict[str, pd.DataFrame],
    compare: tuple[str, ...] = ("BertScore P Art",),
    sampled: dict[str, pd.DataFrame] | None = None,
    subsets: tuple[str, ...] = ("all", "cnndm", "xsum"),
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    benchmark, released_path = tmp_path / "frank.parquet", tmp_path / "released.parquet"
    labels.to_parquet(benchmark)
    released.to_parquet(released_path)
    paths = []
    for name, table in scorers.items():
        paths.append(tmp_path / f"{name}.parquet")
        table.to_parquet(paths[-1])
    sampled_paths = []
    for name, table in (sampled or {}).items():
        sampled_paths.append(tmp_path / f"{name}.parquet")
        table.to_parquet(sampled_paths[-1])
    out = tmp_path / "out"
    command = [
        "metaeval", "frank-scorers", "--benchmark", str(benchmark), "--released", str(released_path),
        "--scores", *map(str, paths), "--sampled-scores", *map(str, sampled_paths), "--compare", *compare,
        "--subsets", *subsets,
        "--variant", "frank", "--williams-variant", "two_sided", "--resamples", "50", "--confidence", "0.95",
        "--seed", "2022", "--out-correlations", f"{out}/c.csv", "--out-williams", f"{out}/w.csv",
        "--out-metrics", f"{out}/m.json", "--out-ablation", f"{out}/a.csv",
    ]  # fmt: skip
    assert main(command) == 0
    return pd.read_csv(out / "c.csv"), pd.read_csv(out / "w.csv"), json.loads((out / "m.json").read_text())


def test_ablation_of_a_scorer_equals_frank_s_ablation_of_the_same_scores(tmp_path, tables) -> None:
    """FactCC's released scores posing as a scorer get FRANK's own ablation rows for FactCC (the published
    module's ablation, itself checked against scipy's Pearson on system-demeaned scores in test_published_frank.py)."""
    labels, released = tables
    factcc = released[["example_id"]].assign(score=released["FactCC"])
    run(tmp_path, labels, released, {"factcc_copy": factcc})
    ablation = pd.read_csv(tmp_path / "out" / "a.csv")
    joined = published.join_scores(labels, released)
    expected = published.category_ablation(joined, ["all", "cnndm", "xsum"], "frank", ["FactCC", "BertScore P Art"])
    got = ablation.set_index(["metric", "subset", "category"])
    assert set(ablation["metric"]) == {"factlab factcc_copy", "BertScore P Art"}
    assert len(ablation) == len(expected) and len(expected) > 0
    for row in expected.itertuples():
        metric = "factlab factcc_copy" if row.metric == "FactCC" else row.metric
        assert got.loc[(metric, row.subset, row.category), "pearson_influence"] == pytest.approx(row.pearson_influence)
        assert got.loc[(metric, row.subset, row.category), "n"] == row.n


def test_released_scores_as_a_scorer_reproduce_frank(tmp_path, tables) -> None:
    labels, released = tables
    factcc = released[["example_id"]].assign(score=released["FactCC"])
    flipped = factcc.assign(score=-factcc["score"])
    correlations, williams, metrics = run(tmp_path, labels, released, {"factcc_copy": factcc, "factcc_flipped": flipped})
    expected = published.metric_human_correlations(
        published.join_scores(labels, released), ["all", "cnndm", "xsum"], "frank", ["FactCC", "BertScore P Art"]
    ).set_index(["metric", "subset"])
    got = correlations.set_index(["metric", "subset"])
    for subset in ("all", "cnndm", "xsum"):
        assert got.loc[("factlab factcc_copy", subset), "pearson"] == pytest.approx(expected.loc[("FactCC", subset), "pearson"])
        assert got.loc[("factlab factcc_flipped", subset), "spearman"] == pytest.approx(
            -expected.loc[("FactCC", subset), "spearman"]
        )
        assert got.loc[("BertScore P Art", subset), "pearson"] == pytest.approx(
            expected.loc[("BertScore P Art", subset), "pearson"]
        )
    released_pair = published.williams_comparisons(
        published.join_scores(labels, released), "two_sided", ["FactCC", "BertScore P Art"]
    )
    pair = williams[(williams["metric_a"] == "factlab factcc_copy") & (williams["metric_b"] == "BertScore P Art")].iloc[0]
    assert pair["t"] == pytest.approx(released_pair["t"].iloc[0]) and pair["p"] == pytest.approx(released_pair["p"].iloc[0])
    assert set(williams["metric_a"]) | set(williams["metric_b"]) >= {"factlab factcc_copy", "factlab factcc_flipped"}
    # FRANK's headline: FactCC 0.20 below BERTScore-P-Art 0.27, the difference significant
    assert metrics["best_scorer"] == "factcc_copy" and metrics["n"] == 2246
    assert metrics["best_partial_pearson"] == pytest.approx(0.2039, abs=1e-4)
    assert metrics["bertscore_p_art_partial_pearson"] == pytest.approx(0.2711, abs=1e-4)
    assert metrics["williams_p_best_vs_bertscore_p_art"] == pytest.approx(pair["p"])


def test_subsets_without_scored_summaries_are_left_out(tmp_path, tables) -> None:
    labels, released = tables
    cnndm = labels.loc[labels["subset"] == "cnndm", ["example_id"]]
    table = cnndm.merge(released[["example_id", "FactCC"]]).rename(columns={"FactCC": "score"})
    correlations, _, metrics = run(tmp_path, labels, released, {"factcc_cnndm": table})
    assert set(correlations["subset"]) == {"all", "cnndm"} and metrics["n"] == len(cnndm) == 1250


def test_a_constant_scorer_is_left_out_and_named(tmp_path, tables) -> None:
    labels, released = tables
    factcc = released[["example_id"]].assign(score=released["FactCC"])
    constant = released[["example_id"]].assign(score=0.0)
    # FactCC on CNN/DM, but one score per system on XSum (its system's mean): nothing is left there once each system's
    # mean is removed, so the scorer is left out of every subset, which keep comparing the same scorers
    joined = labels[["example_id", "system", "subset"]].merge(factcc, on="example_id")
    system_mean = joined.groupby("system")["score"].transform("mean")
    per_system_on_xsum = joined[["example_id"]].assign(score=joined["score"].where(joined["subset"] == "cnndm", system_mean))
    on_cnndm = per_system_on_xsum.merge(joined[["example_id", "system", "subset"]]).query("subset == 'cnndm'")
    assert on_cnndm.groupby("system")["score"].nunique().min() > 1
    scorers = {"factcc_copy": factcc, "all_zero": constant, "per_system_on_xsum": per_system_on_xsum}
    correlations, _, metrics = run(tmp_path, labels, released, scorers)
    assert set(correlations["metric"]) == {"factlab factcc_copy", "BertScore P Art"}
    assert metrics["constant_scorers_left_out"] == ["factlab all_zero", "factlab per_system_on_xsum"]
    assert metrics["best_partial_pearson"] == pytest.approx(0.2039, abs=1e-4)


def test_a_sampled_scorer_whose_summaries_have_one_rating_per_system_is_left_out_and_named(tmp_path, tables) -> None:
    """A sample (here: every CNN/DM summary, and the XSum summaries rated 0, as a small sample of XSum's mostly
    unfaithful summaries could be) whose ratings are constant within each system of a subset: its partial correlation
    there is undefined, so the scorer is left out and named, and the table is still made for the others."""
    labels, released = tables
    factcc = released[["example_id"]].assign(score=released["FactCC"])
    xsum = labels["subset"] == "xsum"
    chosen = labels.loc[~xsum | (labels["human_score"] == 0), ["example_id"]]
    assert (labels.loc[xsum, "human_score"] == 0).sum() < xsum.sum()  # XSum's ratings vary, not those chosen
    rouge = chosen.merge(released[["example_id", "Rouge L"]]).rename(columns={"Rouge L": "score"})
    correlations, _, metrics = run(tmp_path, labels, released, {"factcc_copy": factcc}, sampled={"rouge_sample": rouge})
    assert set(correlations["metric"]) == {"factlab factcc_copy", "BertScore P Art"}
    assert metrics["scorers_left_out_unvarying_rating"] == ["factlab rouge_sample"]
    assert metrics["constant_scorers_left_out"] == [] and metrics["sampled_scorers_n"] == {}


@pytest.mark.parametrize(
    ("size", "seed", "subsets", "dimensions", "kept"),
    [
        (8, 38, ("all", "cnndm", "xsum"), {"all": 4, "cnndm": 2, "xsum": 2}, True),
        (8, 37, ("all", "cnndm", "xsum"), {"all": 3, "cnndm": 1, "xsum": 2}, False),
        (8, 37, ("all",), {"all": 3}, True),
        (6, 38, ("all",), {"all": 2}, False),
    ],
)
def test_a_sampled_scorer_of_too_few_summaries_for_their_systems_is_left_out_and_named(
    tmp_path, tables, size, seed, subsets, dimensions, kept
) -> None:
    """Seeded samples of a few summaries, at the boundaries: a subset's partial correlation needs 2 dimensions left
    once each system's mean is removed (summaries minus systems, counted here with pandas; in 1, every correlation is
    +-1), and all data, where the Williams tests run, 3 (their correlation matrix is singular in fewer). A scorer
    short of them is left out and named; the table is made for the others."""
    labels, released = tables
    factcc = released[["example_id"]].assign(score=released["FactCC"])
    sample = sample_examples(labels, size, seed=seed)
    on_sample = labels.merge(sample[["example_id"]])
    parts = {"all": on_sample, **{name: on_sample[on_sample["subset"] == name] for name in ("cnndm", "xsum")}}
    assert {name: len(parts[name]) - parts[name]["system"].nunique() for name in subsets} == dimensions
    rouge = sample[["example_id"]].merge(released[["example_id", "Rouge L"]]).rename(columns={"Rouge L": "score"})
    correlations, williams, metrics = run(
        tmp_path, labels, released, {"factcc_copy": factcc}, sampled={"rouge": rouge}, subsets=subsets
    )
    assert metrics["scorers_left_out_too_few_summaries"] == ([] if kept else ["factlab rouge"])
    assert metrics["constant_scorers_left_out"] == metrics["scorers_left_out_unvarying_rating"] == []
    assert ("factlab rouge" in set(correlations["metric"])) == kept and len(williams) == (3 if kept else 1)


def test_the_ablation_figure_keeps_a_metric_whose_cells_are_all_undefined(tmp_path) -> None:
    """An ablation table (the command's columns) where one metric's every cell is NaN: the figure is still drawn, that
    metric without bars (pandas' pivot_table drops an all-NaN row by default)."""
    categories = list(published_figures.GROUPED_CATEGORY_LABELS)
    rows = [
        {"metric": metric, "subset": "all", "category": category, "pearson_influence": value}
        for metric, value in (("factlab defined", 0.05), ("factlab undefined", float("nan")))
        for category in categories
    ]
    figure = tmp_path / "ablation.png"
    published_figures.plot_ablation(pd.DataFrame(rows), ["factlab defined", "factlab undefined"], figure)
    assert figure.read_bytes()[:4] == b"\x89PNG"


def test_an_ablation_cell_whose_flipped_rating_is_one_per_system_on_a_sample_is_nan_and_named(tmp_path, tables) -> None:
    """A seeded sample of 20 summaries (seed 1) whose ratings vary within systems in every subset, but whose
    Discourse-errors and coreference-errors flips do not on CNN/DM (checked below with pandas): those two ablation
    cells are undefined, so they are NaN and named, the other cells and the figure are still made."""
    labels, released = tables
    factcc = released[["example_id"]].assign(score=released["FactCC"])
    sample = sample_examples(labels, 20, seed=1)
    rouge = sample[["example_id"]].merge(released[["example_id", "Rouge L"]]).rename(columns={"Rouge L": "score"})
    _, _, metrics = run(tmp_path, labels, released, {"factcc_copy": factcc}, sampled={"rouge_sample": rouge})
    on_sample = published.join_scores(labels, released).merge(sample[["example_id"]])
    cnndm = on_sample[on_sample["subset"] == "cnndm"]
    assert cnndm.groupby("system")["human_score"].nunique().max() > 1
    for flip in ("Flip_Discourse_Errors", "Flip_CorefE"):
        assert cnndm.groupby("system")[flip].nunique().max() == 1
    assert metrics["scorers_left_out_unvarying_rating"] == [] and metrics["sampled_scorers_n"] == {"rouge_sample": 20}
    assert metrics["ablation_cells_undefined"] == [
        "factlab rouge_sample / cnndm / Discourse_Errors",
        "factlab rouge_sample / cnndm / CorefE",
    ]
    ablation = pd.read_csv(tmp_path / "out" / "a.csv")
    undefined = ablation[ablation["pearson_flipped"].isna()]
    assert len(undefined) == 2 and undefined["pearson_influence"].isna().all() and (undefined["n"] == len(cnndm)).all()
    sample_rows = ablation[ablation["metric"] == "factlab rouge_sample"]
    assert sample_rows["pearson_flipped"].notna().sum() == len(sample_rows) - 2 > 0
    figure = tmp_path / "ablation.png"
    command = ["paper", "frank-ablation-figure", "--ablation", str(tmp_path / "out" / "a.csv"),
               "--correlations", str(tmp_path / "out" / "c.csv"), "--out", str(figure)]  # fmt: skip
    assert main(command) == 0 and figure.read_bytes()[:4] == b"\x89PNG"


def test_the_compared_metrics_are_compared_with_each_other_too_so_the_figures_get_a_full_matrix(tmp_path, tables) -> None:
    """Every pair of metrics has its Williams row, the two released ones included (the published module's numbers on
    the same summaries), so the Williams and metric-matrix figures draw every cell."""
    labels, released = tables
    factcc = released[["example_id"]].assign(score=released["FactCC"])
    noisy = factcc.assign(score=factcc["score"] + released["BertScore P Art"])
    compare = ("BertScore P Art", "FactCC")
    correlations, williams, _ = run(tmp_path, labels, released, {"factcc_copy": factcc, "sum": noisy}, compare)
    metrics = ["factlab factcc_copy", "factlab sum", *compare]
    pairs = {frozenset(pair) for pair in zip(williams["metric_a"], williams["metric_b"], strict=True)}
    assert pairs == {frozenset((a, b)) for i, a in enumerate(metrics) for b in metrics[i + 1 :]}
    released_pair = published.williams_comparisons(published.join_scores(labels, released), "two_sided", list(compare))
    row = williams[williams["metric_a"].isin(compare) & williams["metric_b"].isin(compare)].iloc[0]
    assert row["p"] == pytest.approx(released_pair["p"].iloc[0]) and row["n"] == released_pair["n"].iloc[0] == 2246
    figures = [tmp_path / "williams.png", tmp_path / "matrix.png"]
    command = ["paper", "frank-williams-figure", "--williams", str(tmp_path / "out" / "w.csv"),
               "--correlations", str(tmp_path / "out" / "c.csv"),
               "--out", str(figures[0]), "--out-matrix", str(figures[1])]  # fmt: skip
    assert main(command) == 0
    assert all(figure.read_bytes()[:4] == b"\x89PNG" for figure in figures)


def test_a_sampled_scorer_is_correlated_on_its_sample_beside_the_full_ones(tmp_path, tables) -> None:
    """A scorer of a seeded sample (score.sample: here FRANK's released BERTScore-P-Art posing as one, on 300 summaries)
    gets the published module's correlations and Williams test on those summaries, while the full scorers keep every
    summary; it correlates better than the full scorer (FactCC's scores), yet the headline's best is the full one."""
    labels, released = tables
    factcc = released[["example_id"]].assign(score=released["FactCC"])
    sample = sample_examples(labels, 300, seed=2022)
    bertscore = sample[["example_id"]].merge(released[["example_id", "BertScore P Art"]])
    bertscore = bertscore.rename(columns={"BertScore P Art": "score"})
    correlations, williams, metrics = run(
        tmp_path, labels, released, {"factcc_copy": factcc}, compare=("Rouge 1",), sampled={"bertscore_copy": bertscore}
    )
    joined = published.join_scores(labels, released)
    on_sample = joined[joined["example_id"].isin(sample["example_id"])]
    expected = published.metric_human_correlations(on_sample, ["all", "cnndm", "xsum"], "frank", ["BertScore P Art"])
    got = correlations.set_index(["metric", "subset"])
    for row in expected.itertuples():
        assert got.loc[("factlab bertscore_copy", row.subset), "pearson"] == pytest.approx(row.pearson)
        assert got.loc[("factlab bertscore_copy", row.subset), "n"] == row.n
    assert got.loc[("factlab bertscore_copy", "all"), "n"] == 300
    assert got.loc[("factlab factcc_copy", "all"), "n"] == got.loc[("Rouge 1", "all"), "n"] == 2246
    assert got.loc[("factlab bertscore_copy", "all"), "pearson"] > got.loc[("factlab factcc_copy", "all"), "pearson"]
    assert set(correlations.loc[correlations["sampled"], "metric"]) == {"factlab bertscore_copy"}
    pair = williams[(williams["metric_a"] == "factlab bertscore_copy") & (williams["metric_b"] == "Rouge 1")].iloc[0]
    released_pair = published.williams_comparisons(on_sample, "two_sided", ["BertScore P Art", "Rouge 1"]).iloc[0]
    assert pair["n"] == 300 and pair["p"] == pytest.approx(released_pair["p"]) and pair["t"] == pytest.approx(released_pair["t"])
    assert metrics["best_scorer"] == "factcc_copy" and metrics["n"] == 2246
    assert metrics["sampled_scorers_n"] == {"bertscore_copy": 300}
    cnndm_only = factcc.merge(labels.loc[labels["subset"] == "cnndm", ["example_id"]])
    assert (labels.set_index("example_id").loc[bertscore["example_id"], "subset"] == "xsum").any()
    with pytest.raises(FactlabError, match="bertscore_copy \\(sampled\\): .* not among the FRANK summaries the full"):
        with_scorer_columns(joined, {"factcc_cnndm": cnndm_only}, "FRANK", {"bertscore_copy": bertscore})

"""The ensemble scorer (factlab.score.ensemble), with FRANK's released metric scores posing as its members.

FRANK's CNN/DM summaries are the fit data and its XSum summaries the scored benchmark; the stack is checked
against scikit-learn's own standardise-then-logistic-regression pipeline (predictions, and the out-of-fold
validation AUC of folds grouped by scipy's connected components of sources sharing a word run; the regularisation
grid's choice), through the two commands the workflow runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from factlab.cli import main
from factlab.data.adapters.frank import adapt_frank, adapt_frank_baselines
from factlab.errors import ConfigError
from factlab.score.ensemble import EnsembleSettings

MEMBERS = {"bertscore": "BertScore P Art", "factcc": "FactCC", "rouge": "Rouge L"}  # member name: FRANK's column
FIT, SCORED = "frank_cnndm", "frank_xsum"


@pytest.fixture(scope="module")
def frank(raw) -> pd.DataFrame:
    """FRANK's summaries (labels: factual or not) with its released scores of three metrics."""
    labels, released = adapt_frank(raw).frame, adapt_frank_baselines(raw).frame
    joined = labels.merge(released[["example_id", *MEMBERS.values()]], on="example_id")
    assert len(joined) == 2246 and joined["label"].nunique() == 2
    return joined


def write_benchmark(root: Path, name: str, part: pd.DataFrame) -> None:
    data = root / "results" / "data" / f"{name}.parquet"
    data.parent.mkdir(parents=True, exist_ok=True)
    part.drop(columns=list(MEMBERS.values())).to_parquet(data)
    for member, column in MEMBERS.items():
        scores = root / "results" / "score" / name / f"{member}.parquet"
        scores.parent.mkdir(parents=True, exist_ok=True)
        part[["example_id"]].assign(score=part[column]).to_parquet(scores)


def settings(**overrides) -> str:
    values = {"members": list(MEMBERS), "validation_benchmarks": [FIT], "regularisation_c": [1.0], "folds": 5, "leakage_ngram": 8}
    values.update(overrides)
    return json.dumps(values)


def fit(root: Path, given: tuple[str, ...] = tuple(MEMBERS), **overrides) -> int:
    scores = [str(root / "results" / "score" / FIT / f"{member}.parquet") for member in given]
    data = root / "results" / "data"
    command = ["score", "ensemble-fit", "--benchmark", SCORED, "--evaluated", str(data / f"{SCORED}.parquet"),
               "--data", str(data / f"{FIT}.parquet"), "--scores", *scores,
               "--settings", settings(**overrides), "--out", str(root / "model.json")]  # fmt: skip
    return main(command)


def score(root: Path, shard: int = 0, shards: int = 1, sample: tuple[str, ...] = ("all",)) -> int:
    scores = [str(root / "results" / "score" / SCORED / f"{member}.parquet") for member in MEMBERS]
    command = ["score", "ensemble", "--benchmark", SCORED, "--data", str(root / "results" / "data" / f"{SCORED}.parquet"),
               "--max-examples", "all", "--sample-examples", *sample,
               "--shard", str(shard), "--shards", str(shards), "--threads", "1", "--scores", *scores,
               "--model", str(root / "model.json"), "--out", str(root / f"out{shard}.parquet"),
               "--report", str(root / f"report{shard}.json")]  # fmt: skip
    return main(command)


def runs(text: str, n: int = 8) -> set[tuple[str, ...]]:
    tokens = re.findall(r"\w+", text.lower())
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def leaking_by_hand(fit_part: pd.DataFrame, scored_part: pd.DataFrame) -> pd.Series:
    """Fit rows whose source or output shares an 8-word run with any scored source or output."""
    scored_runs = set().union(*(runs(text) for text in {*scored_part["source"], *scored_part["output"]}))
    return fit_part["source"].map(lambda t: bool(runs(t) & scored_runs)) | fit_part["output"].map(
        lambda t: bool(runs(t) & scored_runs)
    )


def reference_stack(clean: pd.DataFrame, c: float = 1.0) -> object:
    features, labels = clean[list(MEMBERS.values())].to_numpy(float), clean["label"].astype(int).to_numpy()
    return make_pipeline(StandardScaler(), LogisticRegression(C=c)).fit(features, labels)


def groups_by_hand(fit_part: pd.DataFrame) -> np.ndarray:
    """Each row's fold group: scipy's connected components of the graph joining rows whose sources share an 8-word
    run or whose doc_ids are equal, each component named by the benchmark-prefixed doc_id of its first row.

    Rows with one source text share its runs, so the graph joins each row to its text's node and its doc_id's node,
    and texts to each other: the same components as row pairs, with ~250 texts compared pairwise instead of ~1,250
    rows."""
    names = (FIT + "/" + fit_part["doc_id"].astype(str)).to_numpy()
    texts = list(dict.fromkeys(fit_part["source"]))
    text_node = {text: len(names) + i for i, text in enumerate(texts)}
    name_node = {name: len(names) + len(texts) + i for i, name in enumerate(dict.fromkeys(names))}
    text_runs = [runs(text) for text in texts]
    sharing = [(i, j) for i in range(len(texts)) for j in range(i) if text_runs[i] & text_runs[j]]
    edges = [(text_node[texts[i]], text_node[texts[j]]) for i, j in sharing]
    edges += [(row, text_node[text]) for row, text in enumerate(fit_part["source"])]
    edges += [(row, name_node[name]) for row, name in enumerate(names)]
    rows, cols = zip(*edges, strict=True)
    nodes = len(names) + len(texts) + len(name_node)
    graph = coo_matrix((np.ones(len(edges)), (rows, cols)), shape=(nodes, nodes))
    _, component = connected_components(graph, directed=False)
    component = component[: len(names)]
    first = {label: names[np.flatnonzero(component == label)[0]] for label in set(component)}
    return np.array([first[label] for label in component])


def out_of_fold_by_hand(fit_part: pd.DataFrame, c: float = 1.0, groups: np.ndarray | None = None) -> np.ndarray:
    features, labels = fit_part[list(MEMBERS.values())].to_numpy(float), fit_part["label"].astype(int).to_numpy()
    stack = make_pipeline(StandardScaler(), LogisticRegression(C=c))
    groups = groups_by_hand(fit_part) if groups is None else groups
    return cross_val_predict(stack, features, labels, groups=groups, cv=GroupKFold(5), method="predict_proba")[:, 1]


def split(frank: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    return frank[frank["subset"] == "cnndm"], frank[frank["subset"] == "xsum"]


def test_the_stack_is_scikit_learns_standardised_logistic_regression(tmp_path, frank) -> None:
    fit_part, scored_part = split(frank)
    write_benchmark(tmp_path, FIT, fit_part)
    write_benchmark(tmp_path, SCORED, scored_part)
    assert fit(tmp_path) == 0 and score(tmp_path) == 0
    leaking = leaking_by_hand(fit_part, scored_part)  # the two subsets share a few stock phrases
    fit_part = fit_part[~leaking]
    labels = fit_part["label"].astype(int).to_numpy()
    reference = reference_stack(fit_part)
    got = pd.read_parquet(tmp_path / "out0.parquet").set_index("example_id")
    expected = reference.predict_proba(scored_part[list(MEMBERS.values())].to_numpy(float))[:, 1]
    assert got.loc[scored_part["example_id"], "score"].to_numpy() == pytest.approx(expected, abs=1e-9)
    assert got.loc[scored_part["example_id"], "factcc"].tolist() == scored_part["FactCC"].tolist()  # members kept as detail
    stored = json.loads((tmp_path / "model.json").read_text())
    # the out-of-fold AUC: scikit-learn's cross_val_predict over folds grouped by sources sharing a word run
    out_of_fold = out_of_fold_by_hand(fit_part)
    cells = stored["validation_auc"][FIT]
    assert cells["ensemble_out_of_fold"] == pytest.approx(roc_auc_score(labels, out_of_fold))
    assert cells["factcc"] == pytest.approx(roc_auc_score(labels, fit_part["FactCC"]))
    assert stored["fit_examples"] == len(fit_part) and stored["fit_examples_dropped_unscored_member"] == {FIT: 0}
    assert (
        stored["fit_examples_dropped_leaking"] == {FIT: int(leaking.sum())} and stored["model"]["evaluated_benchmark"] == SCORED
    )
    report = json.loads((tmp_path / "report0.json").read_text())
    assert report["examples"] == len(scored_part) and report["examples_unscored_member"] == 0


def test_shards_of_the_scored_benchmark_partition_its_examples(tmp_path, frank) -> None:
    fit_part, scored_part = split(frank)
    write_benchmark(tmp_path, FIT, fit_part)
    write_benchmark(tmp_path, SCORED, scored_part)
    assert fit(tmp_path) == 0 and score(tmp_path) == 0
    whole = pd.read_parquet(tmp_path / "out0.parquet").set_index("example_id")["score"]
    parts = []
    for shard in range(3):
        assert score(tmp_path, shard, 3) == 0
        parts.append(pd.read_parquet(tmp_path / f"out{shard}.parquet"))
    merged = pd.concat(parts).set_index("example_id")["score"]
    assert sorted(merged.index) == sorted(whole.index) and merged.loc[whole.index].tolist() == whole.tolist()


def test_an_unscored_member_leaves_the_example_unscored_and_the_fit_counts_it(tmp_path, frank) -> None:
    fit_part, scored_part = split(frank)
    fit_part, scored_part = fit_part.copy(), scored_part.copy()
    fit_part.iloc[:4, fit_part.columns.get_loc("FactCC")] = np.nan
    scored_part.iloc[:3, scored_part.columns.get_loc("Rouge L")] = np.nan
    write_benchmark(tmp_path, FIT, fit_part)
    write_benchmark(tmp_path, SCORED, scored_part)
    assert fit(tmp_path) == 0 and score(tmp_path) == 0
    stored = json.loads((tmp_path / "model.json").read_text())
    leaking = leaking_by_hand(fit_part, scored_part)
    assert not leaking.iloc[:4].any()
    assert stored["fit_examples"] == len(fit_part) - 4 - leaking.sum() and stored["fit_examples_dropped_unscored_member"] == {
        FIT: 4
    }
    got = pd.read_parquet(tmp_path / "out0.parquet").set_index("example_id")["score"]
    assert got.loc[scored_part["example_id"].iloc[:3]].isna().all() and got.notna().sum() == len(scored_part) - 3
    assert json.loads((tmp_path / "report0.json").read_text())["examples_unscored_member"] == 3


def test_where_a_member_scored_a_sample_the_stack_scores_that_sample(tmp_path, frank) -> None:
    """A member of a seeded sample (score.sample), the others whole: the stack scores exactly the sample's examples
    (drawn as the member's job drew it), every one of them, to the values it gives them on the whole benchmark."""
    from factlab.preprocess.benchmark import select_examples
    from factlab.sampling import sample_examples

    fit_part, scored_part = split(frank)
    write_benchmark(tmp_path, FIT, fit_part)
    write_benchmark(tmp_path, SCORED, scored_part)
    assert fit(tmp_path) == 0 and score(tmp_path) == 0
    whole = pd.read_parquet(tmp_path / "out0.parquet").set_index("example_id")["score"]
    drawn = sample_examples(select_examples(scored_part.drop(columns=list(MEMBERS.values())), SCORED), 50, seed=2022)
    member = tmp_path / "results" / "score" / SCORED / "factcc.parquet"
    pd.read_parquet(member).merge(drawn[["example_id"]]).to_parquet(member)  # FactCC scored its sample only
    assert score(tmp_path, sample=("50", "--sample-seed", "2022")) == 0
    got = pd.read_parquet(tmp_path / "out0.parquet").set_index("example_id")["score"]
    assert sorted(got.index) == sorted(drawn["example_id"]) and got.notna().all()
    assert np.allclose(got.to_numpy(), whole.loc[got.index].to_numpy())
    report = json.loads((tmp_path / "report0.json").read_text())
    assert report["examples_unscored_member"] == 0 and report["examples_not_sampled"] == len(scored_part) - 50
    assert report["sample"] == {"examples": 50, "seed": 2022}


def test_bad_settings_and_inputs_are_one_line_errors(tmp_path, frank, capsys) -> None:
    fit_part, scored_part = split(frank)
    write_benchmark(tmp_path, FIT, fit_part)
    write_benchmark(tmp_path, SCORED, scored_part)
    assert fit(tmp_path, validation_benchmarks=[SCORED]) != 0  # the data given are not the configured fit data
    assert "reads the validation benchmarks ['frank_xsum'] only" in capsys.readouterr().err
    assert not (tmp_path / "model.json").exists()
    assert fit(tmp_path, given=("bertscore", "factcc")) != 0
    assert "frank_cnndm: no score table of ensemble member(s) ['rouge']" in capsys.readouterr().err
    assert fit(tmp_path, validation_benchmarks=[FIT]) == 0
    model = json.loads((tmp_path / "model.json").read_text())
    model["model"]["evaluated_benchmark"] = "frank_other"
    (tmp_path / "model.json").write_text(json.dumps(model))
    assert score(tmp_path) != 0 and "fitted to score 'frank_other', not 'frank_xsum'" in capsys.readouterr().err
    model["model"]["evaluated_benchmark"] = SCORED
    model["model"]["weights"] = model["model"]["weights"][:-1]
    (tmp_path / "model.json").write_text(json.dumps(model))
    assert score(tmp_path) != 0 and "members, mean, scale and weights differ in length" in capsys.readouterr().err
    (tmp_path / "model.json").write_text("{}")
    assert score(tmp_path) != 0 and "not an ensemble model" in capsys.readouterr().err
    assert not (tmp_path / "out0.parquet").exists()
    few = fit_part[fit_part["doc_id"].isin(fit_part["doc_id"].unique()[:3])]
    write_benchmark(tmp_path, FIT, few)
    assert fit(tmp_path) != 0
    assert "5 folds need as many groups of source documents; the fit data have 3" in capsys.readouterr().err
    bad_settings = ({"members": ["rouge"]}, {"members": ["rouge", "ensemble"]}, {"validation_benchmarks": []}, {"folds": 1})
    for bad in (*bad_settings, {"regularisation_c": []}, {"regularisation_c": [1.0, 0.0]}, {"regularisation_c": 1.0}):
        with pytest.raises(ConfigError):
            EnsembleSettings(**{**json.loads(settings()), **bad})


def test_fit_examples_sharing_text_with_the_scored_benchmark_are_dropped_and_counted(tmp_path, frank) -> None:
    """Five scored articles replaced by CNN/DM articles of the fit data (upper-cased, commas changed): the fit
    examples of those articles leave the fit, which then equals scikit-learn's fit on the rest."""
    fit_part, scored_part = split(frank)
    scored_part = scored_part.copy()
    copied = fit_part.drop_duplicates("doc_id").iloc[:5]
    for doc, source in zip(scored_part["doc_id"].unique()[:5], copied["source"], strict=True):
        scored_part.loc[scored_part["doc_id"] == doc, "source"] = source.upper().replace(",", " ;")
    write_benchmark(tmp_path, FIT, fit_part)
    write_benchmark(tmp_path, SCORED, scored_part)
    assert fit(tmp_path) == 0 and score(tmp_path) == 0
    leaking = leaking_by_hand(fit_part, scored_part)
    assert fit_part.loc[fit_part["doc_id"].isin(copied["doc_id"]), "doc_id"].index.isin(leaking[leaking].index).all()
    stored = json.loads((tmp_path / "model.json").read_text())
    assert stored["fit_examples_dropped_leaking"] == {FIT: int(leaking.sum())} and stored["fit_examples"] == int((~leaking).sum())
    got = pd.read_parquet(tmp_path / "out0.parquet").set_index("example_id").loc[scored_part["example_id"], "score"]
    expected = reference_stack(fit_part[~leaking]).predict_proba(scored_part[list(MEMBERS.values())].to_numpy(float))[:, 1]
    assert got.to_numpy() == pytest.approx(expected, abs=1e-9)


def test_examples_no_member_scored_are_not_fit_data(tmp_path, frank) -> None:
    """preprocess.max_examples keeps the first N examples: the rest of the validation benchmark is not fit data and
    is not counted as leaking or unscored."""
    fit_part, scored_part = split(frank)
    write_benchmark(tmp_path, FIT, fit_part)
    write_benchmark(tmp_path, SCORED, scored_part)
    for member in MEMBERS:  # the members scored the first 300 examples only
        path = tmp_path / "results" / "score" / FIT / f"{member}.parquet"
        pd.read_parquet(path).iloc[:300].to_parquet(path)
    assert fit(tmp_path) == 0
    stored = json.loads((tmp_path / "model.json").read_text())
    leaking = leaking_by_hand(fit_part.iloc[:300], scored_part)
    assert stored["fit_examples"] == 300 - leaking.sum()
    assert stored["fit_examples_dropped_leaking"] == {FIT: int(leaking.sum())}
    assert stored["fit_examples_dropped_unscored_member"] == {FIT: 0}


def test_one_article_in_two_documents_is_one_fold_group_and_the_grid_picks_the_best_out_of_fold_c(tmp_path, frank) -> None:
    """Ten fit articles copied, re-tokenised, into other documents' sources: the folds keep each copy with its
    original (scipy's connected components), and of the C grid the stack keeps the one scikit-learn's out-of-fold
    predictions rank best on the fit data, fitted on all of it."""
    fit_part, scored_part = split(frank)
    fit_part = fit_part.copy()
    documents = fit_part["doc_id"].unique()
    for original, copy in zip(documents[:10], documents[10:20], strict=True):
        source = fit_part.loc[fit_part["doc_id"] == original, "source"].iloc[0]
        fit_part.loc[fit_part["doc_id"] == copy, "source"] = source.upper().replace(".", " .")
    # one summary of a further article gets an unrelated source: its doc_id still keeps it with its article
    moved = fit_part.index[fit_part["doc_id"] == documents[20]][0]
    fit_part.loc[moved, "source"] = "a source of seven words only"
    write_benchmark(tmp_path, FIT, fit_part)
    write_benchmark(tmp_path, SCORED, scored_part)
    grid = [0.001, 0.01, 1.0, 100.0]
    assert fit(tmp_path, regularisation_c=grid) == 0 and score(tmp_path) == 0
    clean = fit_part[~leaking_by_hand(fit_part, scored_part)]
    groups = groups_by_hand(clean)
    assert len(set(groups)) <= clean["doc_id"].nunique() - 10  # the copies joined their originals
    if moved in clean.index:  # unless it leaked: the moved summary stays in its article's group
        assert len(set(groups[(clean["doc_id"] == documents[20]).to_numpy()])) == 1
    labels = clean["label"].astype(int).to_numpy()
    expected = {c: roc_auc_score(labels, out_of_fold_by_hand(clean, c, groups)) for c in grid}
    best = max(grid, key=lambda c: (expected[c], -c))
    stored = json.loads((tmp_path / "model.json").read_text())
    assert stored["fit_groups"] == len(set(groups))
    assert stored["regularisation_search_macro_auc"] == {repr(c): pytest.approx(auc) for c, auc in expected.items()}
    assert stored["regularisation_c_chosen"] == best and len(set(np.round(list(expected.values()), 6))) > 1
    got = pd.read_parquet(tmp_path / "out0.parquet").set_index("example_id").loc[scored_part["example_id"], "score"]
    reference = reference_stack(clean, best).predict_proba(scored_part[list(MEMBERS.values())].to_numpy(float))[:, 1]
    assert got.to_numpy() == pytest.approx(reference, abs=1e-9)


def test_fit_data_without_a_benchmark_holding_both_labels_cannot_choose_c(tmp_path, frank, capsys) -> None:
    """Two fit cuts, each one label only (both labels overall): no out-of-fold AUC exists, so no C is chosen."""
    fit_part, scored_part = split(frank)
    write_benchmark(tmp_path, SCORED, scored_part)
    for name, label in (("cut_true", 1), ("cut_false", 0)):
        write_benchmark(tmp_path, name, fit_part[fit_part["label"] == label])
    data, scores, cuts = tmp_path / "results" / "data", tmp_path / "results" / "score", ["cut_true", "cut_false"]
    command = ["score", "ensemble-fit", "--benchmark", SCORED, "--evaluated", str(data / f"{SCORED}.parquet"),
               "--data", *(str(data / f"{name}.parquet") for name in cuts),
               "--scores", *(str(scores / name / f"{member}.parquet") for name in cuts for member in MEMBERS),
               "--settings", settings(validation_benchmarks=cuts), "--out", str(tmp_path / "model.json")]  # fmt: skip
    assert main(command) != 0
    assert "no validation benchmark of the ensemble's fit data holds both labels" in capsys.readouterr().err
    assert not (tmp_path / "model.json").exists()

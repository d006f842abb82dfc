"""`ensemble`: a logistic-regression stack of other factlab scorers' example scores, fitted on validation data only.

TRUE (Honovich et al., 2022) reports an ensemble of its best metrics (their mean); factlab's learns the weights
instead, because its members' scores live on different scales (a cosine, a ROUGE precision, a probability). Each
member's score is standardised with the fit data's mean and standard deviation, and scikit-learn's
`LogisticRegression` maps the standardised vector to P(consistent). The fit data are the validation benchmarks'
labelled examples (the SummaC validation cuts by default), which the ensemble never scores: the workflow refuses a
configuration that would score them. Those cuts share articles and even summaries with evaluated benchmarks (XSum
articles with XSumFaith and FRANK, SummEval's 100 articles with TRUE's SummEval), so one stack is fitted per scored
benchmark, on the fit examples whose source and output share no run of `leakage_ngram` words with that benchmark's
texts (the aligner mixture's leakage rule, `factlab.data.leakage`); the dropped examples are counted. An
out-of-fold validation AUC is recorded beside each member's own, so the choice to use the stack rests on validation
data. Its folds keep together the fit examples whose sources share a run of `leakage_ngram` words (one article in two
validation cuts, in two tokenisations, is one group), and the regularisation strength is the grid value with the best
out-of-fold macro AUC (so the stack's recorded AUC, the best of the grid's, is optimistic by that choice).

An example some member left unscored (OpenIE with no triples) is not scored by the ensemble; the fit drops such
examples and counts them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from factlab.data.leakage import EvaluationIndex, leaking_rows, shingles
from factlab.errors import ConfigError, DataError, FactlabError
from factlab.io import write_text


@dataclass(frozen=True)
class EnsembleSettings:
    members: list[str] = field(default_factory=list)  # scorers whose example scores are stacked
    validation_benchmarks: list[str] = field(default_factory=list)  # the fit data; never scored by the ensemble
    regularisation_c: list[float] = field(default_factory=lambda: [1.0])  # LogisticRegression's C: the grid searched
    folds: int = 5  # out-of-fold validation AUC; examples whose sources share a word run stay in one fold
    leakage_ngram: int = 8  # a fit example sharing a run of this many words with the scored benchmark is dropped

    def __post_init__(self) -> None:
        if len(self.members) < 2 or len(set(self.members)) != len(self.members):
            raise ConfigError(f"score.ensemble.members needs two or more distinct scorers, got {self.members}")
        if "ensemble" in self.members:
            raise ConfigError("score.ensemble.members cannot hold the ensemble itself")
        if not self.validation_benchmarks:
            raise ConfigError("score.ensemble.validation_benchmarks is empty: the stack has nothing to be fitted on")
        grid = self.regularisation_c
        if not isinstance(grid, list) or not grid or not all(isinstance(c, int | float) and c > 0 for c in grid):
            raise ConfigError(
                f"score.ensemble.regularisation_c must be a non-empty list of positive values, got {self.regularisation_c}"
            )
        if self.folds < 2:
            raise ConfigError(f"score.ensemble.folds must be at least 2, got {self.folds}")
        if self.leakage_ngram < 1:
            raise ConfigError(f"score.ensemble.leakage_ngram must be positive, got {self.leakage_ngram}")


@dataclass(frozen=True)
class EnsembleModel:
    """The fitted stack: P(consistent) = sigmoid(intercept + sum_m weight_m * (score_m - mean_m) / scale_m)."""

    evaluated_benchmark: str  # the benchmark it scores: its fit data share no word run with that benchmark's texts
    members: list[str]
    mean: list[float]
    scale: list[float]
    weights: list[float]
    intercept: float

    def predict(self, features: np.ndarray) -> np.ndarray:
        """P(consistent) per row of member scores (columns in `members` order); NaN where a member score is NaN."""
        standardised = (features - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = standardised @ np.asarray(self.weights) + self.intercept
        return 1.0 / (1.0 + np.exp(-logits))

    def save(self, path: str | Path, report: Mapping[str, Any]) -> None:
        write_text(json.dumps({"model": asdict(self), **report}, indent=2, sort_keys=True) + "\n", path)

    @classmethod
    def load(cls, path: str | Path) -> EnsembleModel:
        try:
            stored = json.loads(Path(path).read_text())["model"]
            model = cls(**stored)
        except (OSError, KeyError, TypeError, json.JSONDecodeError) as error:
            raise FactlabError(f"{path}: not an ensemble model written by `factlab score ensemble-fit` ({error})") from error
        lengths = {len(model.members), len(model.mean), len(model.scale), len(model.weights)}
        if len(lengths) != 1:
            raise FactlabError(f"{path}: the ensemble model's members, mean, scale and weights differ in length")
        return model


def member_table(members: Sequence[str], scores: Mapping[str, pd.DataFrame], benchmark: str) -> pd.DataFrame:
    """`example_id` and one column per member's score, over the examples every member's table lists."""
    missing = [member for member in members if member not in scores]
    if missing:
        raise FactlabError(f"{benchmark}: no score table of ensemble member(s) {missing}")
    table: pd.DataFrame | None = None
    for member in members:
        frame = scores[member]
        for column in ("example_id", "score"):
            if column not in frame.columns:
                raise DataError(f"{member}'s score table lacks {column!r}", file=f"results/score/{benchmark}/{member}.parquet")
        part = frame[["example_id", "score"]].rename(columns={"score": member})
        table = part if table is None else table.merge(part, on="example_id", how="outer")
    assert table is not None
    return table


def source_groups(sources: Sequence[str], labels: Sequence[str], n: int) -> list[str]:
    """Per source, the label of its group: sources sharing a run of n words or a label (a doc_id), directly or through
    others, form one group, named by the label of its first source."""
    parent = list(range(len(sources)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with_run: dict[int, int] = {}
    first_with_label: dict[str, int] = {}
    for i, (source, label) in enumerate(zip(sources, labels, strict=True)):
        for j in [first_with_label.setdefault(label, i), *(first_with_run.setdefault(run, i) for run in shingles(source, n))]:
            a, b = root(i), root(j)
            parent[max(a, b)] = min(a, b)  # the root is the group's first source: labels do not depend on hash order
    return [labels[root(i)] for i in range(len(sources))]


def fit_data(
    members: Sequence[str],
    benchmarks: Mapping[str, tuple[pd.DataFrame, Mapping[str, pd.DataFrame]]],
    evaluated: EvaluationIndex,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Labelled rows (benchmark, doc_id, group, label, members) of the validation benchmarks (`name: (data, member
    scores)`) that some member scored and that share no word run with the `evaluated` benchmark's texts, with the
    counts of examples dropped for leaking and because a member left them unscored. `group` keeps together the rows
    whose sources share a run of `evaluated.n` words (`source_groups`): the out-of-fold AUC's folds."""
    frames, leaking, unscored = [], {}, {}
    for name, (data, scores) in benchmarks.items():
        for column in ("example_id", "doc_id", "label", "source", "output"):
            if column not in data.columns:
                raise DataError(f"the benchmark table lacks {column!r}", file=f"results/data/{name}.parquet", field=column)
        # the examples some member scored (preprocess.max_examples keeps the first N): the others are not fit data
        table = member_table(members, scores, name)
        labelled = data[data["label"].notna() & data["example_id"].isin(table["example_id"])]
        pairs = labelled[["source", "output"]].astype(str).set_axis(["text_a", "text_b"], axis=1)
        leaks = leaking_rows(pairs, evaluated, progress=False).notna()
        leaking[name] = int(leaks.sum())
        clean = labelled[~leaks][["example_id", "doc_id", "label", "source"]]
        joined = clean.merge(table, on="example_id")
        complete = joined[list(members)].notna().all(axis=1)
        unscored[name] = int((~complete).sum())
        kept = joined[complete]
        frames.append(kept.assign(benchmark=name, doc_id=name + "/" + kept["doc_id"].astype(str)))
    table = pd.concat(frames, ignore_index=True)
    table["group"] = source_groups(table["source"].astype(str).tolist(), table["doc_id"].tolist(), evaluated.n)
    table = table.drop(columns="source")
    if table.empty or table["label"].nunique() < 2:
        raise FactlabError(
            f"the ensemble's fit data ({sorted(benchmarks)}, less leaking examples) hold {len(table)} examples, not both labels"
        )
    counts = {
        "fit_examples": len(table),
        "fit_examples_dropped_leaking": leaking,
        "fit_examples_dropped_unscored_member": unscored,
    }
    return table, counts


def fit_ensemble(table: pd.DataFrame, settings: EnsembleSettings, evaluated: str) -> tuple[EnsembleModel, dict[str, Any]]:
    """The stack fitted on all of `table` (from `fit_data`) with the chosen C, and its report: per C of the grid, the
    out-of-fold macro AUC over the validation benchmarks (each fold standardised and fitted on the other folds; folds
    by `group`); the C with the highest is chosen (ties: the smaller), and its per-benchmark out-of-fold AUC is
    reported beside each member's own. That AUC is the best of the grid's, so it is optimistic by the selection
    (a member's is not): the criterion, not an estimate of the stack's accuracy elsewhere. C is chosen for ranking,
    not calibration: a small C pulls the probabilities towards the fit data's base rate."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold

    members = settings.members
    features, labels = table[members].to_numpy(dtype=float), table["label"].astype(int).to_numpy()
    constant = [member for member, spread in zip(members, features.std(axis=0), strict=True) if spread == 0]
    if constant:
        raise FactlabError(f"ensemble member(s) {constant} give every validation example the same score")
    groups = table["group"].to_numpy()
    if len(set(groups)) < settings.folds:
        raise FactlabError(
            f"the ensemble's {settings.folds} folds need as many groups of source documents; the fit data have {len(set(groups))}"
        )
    rows_by_benchmark = {name: rows for name, rows in table.groupby("benchmark").indices.items() if len(set(labels[rows])) == 2}
    if not rows_by_benchmark:
        raise FactlabError("no validation benchmark of the ensemble's fit data holds both labels: its C cannot be chosen")

    def macro_auc(predictions: np.ndarray) -> float:
        return float(np.mean([roc_auc_score(labels[rows], predictions[rows]) for rows in rows_by_benchmark.values()]))

    folds = GroupKFold(n_splits=settings.folds)
    grid = sorted(settings.regularisation_c)
    out_of_fold_by_c = {c: out_of_fold_predictions(features, labels, groups, folds, c) for c in grid}
    search_by_c = {c: macro_auc(out_of_fold) for c, out_of_fold in out_of_fold_by_c.items()}
    chosen = max(grid, key=search_by_c.__getitem__)  # max keeps the first maximum: a tie keeps the smaller C
    out_of_fold = out_of_fold_by_c[chosen]
    search = {repr(c): auc for c, auc in search_by_c.items()}
    stack = standardised_regression(chosen).fit(features, labels)
    scaler, regression = stack.named_steps["standardscaler"], stack.named_steps["logisticregression"]
    model = EnsembleModel(
        evaluated_benchmark=evaluated,
        members=list(members),
        mean=[float(value) for value in scaler.mean_],
        scale=[float(value) for value in scaler.scale_],
        weights=[float(value) for value in regression.coef_[0]],
        intercept=float(regression.intercept_[0]),
    )
    auc: dict[str, dict[str, float]] = {}
    for name, rows in rows_by_benchmark.items():
        auc[name] = {"ensemble_out_of_fold": float(roc_auc_score(labels[rows], out_of_fold[rows]))}
        auc[name].update({member: float(roc_auc_score(labels[rows], features[rows, i])) for i, member in enumerate(members)})
    keys = ["ensemble_out_of_fold", *members]
    macro = {key: float(np.mean([cells[key] for cells in auc.values()])) for key in keys}
    report = {
        "settings": asdict(settings),
        "regularisation_c_chosen": chosen,
        "regularisation_search_macro_auc": search,
        "fit_groups": len(set(groups)),
        "validation_auc": auc,
        "validation_macro_auc": macro,
    }
    return model, report


def standardised_regression(c: float) -> Any:
    """scikit-learn's pipeline of the stack: each member standardised, then an L2 logistic regression of strength 1/C."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=c))


def out_of_fold_predictions(features: np.ndarray, labels: np.ndarray, groups: np.ndarray, folds: Any, c: float) -> np.ndarray:
    """P(consistent) of each fit example from the stack fitted on the folds without its group."""
    from sklearn.model_selection import cross_val_predict

    stack = standardised_regression(c)
    try:
        probabilities = cross_val_predict(stack, features, labels, groups=groups, cv=folds, method="predict_proba")
    except ValueError as error:  # a fold whose training part holds one label only
        raise FactlabError(f"the ensemble's out-of-fold fit failed: {error}") from error
    return probabilities[:, 1]


def score_examples(
    examples: pd.DataFrame, scores: Mapping[str, pd.DataFrame], model: EnsembleModel, benchmark: str
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ensemble's score of each of `examples` (NaN where a member left it unscored), with the members' scores."""
    if model.evaluated_benchmark != benchmark:
        raise FactlabError(f"the ensemble model was fitted to score {model.evaluated_benchmark!r}, not {benchmark!r}")
    table = examples[["example_id"]].merge(member_table(model.members, scores, benchmark), on="example_id", how="left")
    values = model.predict(table[model.members].to_numpy(dtype=float))
    unscored = int(np.isnan(values).sum())
    result = table.assign(score=values)[["example_id", "score", *model.members]]
    return result, {"examples": len(result), "examples_unscored_member": unscored}

"""The aligner's training mixture: real training corpora and synthetic errors in one table.

Every row is `(text_a, text_b, label_3way | label_bin | score, task, origin)`:
- `label_3way`: 0 aligned / 1 neutral / 2 contradiction (3-way NLI corpora: ANLI, SICK, Climate-FEVER);
- `label_bin`: 1 aligned / 0 not (binary corpora: DocNLI's MNLI and FEVER-NLI, RTE, MCTest-NLI,
  HaluEval QA, FactCG CG2C_doc, WiCE subclaims, and the synthetic errors);
- `score`: relatedness in [0, 1] (SICK's 1-5 relatedness, rescaled) for the regression head.
`task` names the heads a row trains (nli3, binary, nli3+regression, synthetic_factcc,
synthetic_factedit); `origin` is the corpus (synthetic rows: the corpus of their documents).

Each corpus contributes at most `sources[name]` pairs (a seeded sample; 0 = all). Synthetic pairs
(factlab.train.synthetic.pairs) are made from the documents of `synthetic_documents` — training
corpora only, never evaluation material. Pairs that share an n-word run with any evaluated text
are removed and counted per origin (factlab.data.leakage). A seeded share of each origin's
documents (whole documents, so no premise is on both sides) forms the `validation` split.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from factlab.commands import settings_from_mapping
from factlab.data.leakage import EvaluationIndex, evaluation_texts, leaking_rows
from factlab.errors import FactlabError
from factlab.train import token_labels

LOG = logging.getLogger(__name__)
THREE_WAY = {"entailment": 0, "neutral": 1, "contradiction": 2}
COLUMNS = (
    "text_a",
    "text_b",
    "label_3way",
    "label_bin",
    "score",
    "task",
    "origin",
    "transform",
    "doc_id",
    "unsupported_spans",  # JSON [start, end) spans of text_b its premise does not support; null = unknown (token_labels)
    "error_type",  # the FRANK category of a synthetic error (token_labels.ERROR_TYPE_OF); null elsewhere
    "split",
)


@dataclass(frozen=True)
class MixtureSettings:
    sources: dict[str, int] = field(default_factory=dict)  # training corpus -> max pairs (0 = all)
    synthetic_documents: dict[str, int] = field(default_factory=dict)  # corpus -> max distinct documents (0 = all)
    synthetic: dict[str, Any] = field(default_factory=dict)  # factlab.train.synthetic.pairs.SyntheticSettings fields
    validation_share: float = 0.05
    max_validation_per_origin: int = 200
    leakage_ngram: int = 8
    seed: int = 2022

    def __post_init__(self) -> None:
        if not 0 <= self.validation_share < 1:
            raise FactlabError("mixture validation_share must be in [0, 1)")
        if self.leakage_ngram < 1 or self.max_validation_per_origin < 0:
            raise FactlabError("mixture leakage_ngram must be >= 1 and max_validation_per_origin >= 0")
        negative = sorted(name for name, n in {**self.sources, **self.synthetic_documents}.items() if n < 0)
        if negative:
            raise FactlabError(f"mixture sizes must be >= 0 (0 = all): {negative}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> MixtureSettings:
        return settings_from_mapping(values, cls, "mixture")


def rng_for(seed: int, name: str) -> np.random.Generator:
    """A generator per (seed, corpus): adding a corpus does not change another corpus's sample."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def corpus_pairs(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    """A canonical training benchmark as mixture rows (labels read from `nli_label`, `label`, `relatedness`)."""
    n = len(frame)
    nli = frame["nli_label"].astype("string") if "nli_label" in frame else pd.Series(pd.NA, index=frame.index, dtype="string")
    three_way = bool(nli.isin(["neutral", "contradiction"]).any())
    if three_way:
        unknown = sorted(set(nli.dropna()) - set(THREE_WAY))
        if unknown:
            raise FactlabError(f"training corpus {name}: unknown nli_label values {unknown}")
        label_3way = nli.map(THREE_WAY).astype("Int8")
        label_bin = pd.array([pd.NA] * n, dtype="Int8")
        task = "nli3"
    else:
        label_3way = pd.array([pd.NA] * n, dtype="Int8")
        label_bin = frame["label"].astype("Int8")
        task = "binary"
    if "relatedness" in frame:
        score = ((pd.to_numeric(frame["relatedness"]) - 1.0) / 4.0).astype("float64")
        task += "+regression"
    else:
        score = pd.Series(np.nan, index=frame.index, dtype="float64")
    return pd.DataFrame(
        {
            "text_a": corpus_premises(frame),
            "text_b": frame["output"].astype(str).to_numpy(),
            "label_3way": pd.array(label_3way, dtype="Int8"),
            "label_bin": pd.array(label_bin, dtype="Int8"),
            "score": score.to_numpy(),
            "task": task,
            "origin": name,
            "transform": "",
            "doc_id": frame["doc_id"].astype(str).to_numpy(),
            "unsupported_spans": corpus_token_spans(frame, label_bin, label_3way),
            "error_type": None,
        }
    )


def corpus_premises(frame: pd.DataFrame) -> np.ndarray:
    """Each row's premise: the source, or where the corpus marks its evidence sentences (WiCE's
    `supporting_sentences` at `evidence_offsets`) those sentences in page order: a cited page is longer
    than the model reads, and the annotators judged the claim's tokens against that evidence."""
    sources = frame["source"].astype(str).to_numpy()
    if "supporting_sentences" not in frame or "evidence_offsets" not in frame:
        return sources
    premises = []
    for source, supporting, offsets in zip(sources, frame["supporting_sentences"], frame["evidence_offsets"], strict=True):
        spans = json.loads(offsets)
        chosen = sorted({index for group in json.loads(supporting) for index in group})
        premises.append(" ".join(source[spans[i][0] : spans[i][1]].strip() for i in chosen) if chosen else source)
    return np.asarray(premises, dtype=object)


def corpus_token_spans(frame: pd.DataFrame, label_bin: Any, label_3way: Any) -> list[str | None]:
    """`unsupported_spans` of a corpus's rows (factlab.train.token_labels): annotated token flags (WiCE),
    a hallucinated answer (HaluEval), `[]` for a supported pair, else unknown."""
    supported = (pd.Series(label_bin, dtype="Int8") == 1).fillna(False) | (pd.Series(label_3way, dtype="Int8") == 0).fillna(False)
    spans: list[str | None] = []
    for position, (_, row) in enumerate(frame.iterrows()):
        if "non_supported_spans" in frame and isinstance(row.get("non_supported_spans"), str):
            found = token_labels.flagged_token_spans(json.loads(row["token_offsets"]), json.loads(row["non_supported_spans"]))
        elif bool(supported.iloc[position]):
            found = []
        elif row.get("answer_kind") == "hallucinated" and isinstance(row.get("answer"), str):
            found = token_labels.answer_span(str(row["output"]), row["answer"])
        else:
            found = None
        spans.append(token_labels.dumps(found))
    return spans


def sample_rows(frame: pd.DataFrame, limit: int, rng: np.random.Generator) -> pd.DataFrame:
    if limit == 0 or len(frame) <= limit:
        return frame
    keep = np.sort(rng.choice(len(frame), size=limit, replace=False))
    return frame.iloc[keep]


def synthetic_pairs(frames: Mapping[str, pd.DataFrame], settings: MixtureSettings) -> tuple[pd.DataFrame, dict[str, Any]]:
    """FactCC/FactEdit-style pairs from the distinct sources of the `synthetic_documents` corpora."""
    from factlab.train.synthetic.pairs import SyntheticSettings, make_synthetic_pairs

    documents = []
    for name, limit in sorted(settings.synthetic_documents.items()):
        frame = frames[name]
        distinct = frame.drop_duplicates("source")[["doc_id", "source"]].rename(columns={"source": "text"})
        documents.append(sample_rows(distinct, limit, rng_for(settings.seed, f"documents:{name}")).assign(origin=name))
    if not documents:
        return pd.DataFrame(columns=list(COLUMNS[:-1])), {}
    synthetic_settings = SyntheticSettings(**{"seed": settings.seed, **settings.synthetic})
    pairs, counts = make_synthetic_pairs(pd.concat(documents, ignore_index=True), synthetic_settings)
    spans = [
        token_labels.dumps(token_labels.synthetic_spans(transform, original, claim))
        for transform, original, claim in zip(pairs["transform"], pairs["original_claim"], pairs["text_b"], strict=True)
    ]
    counts["token_spans_unlocated"] = sum(span is None for span in spans)
    pairs = pairs.assign(
        score=np.nan,
        unsupported_spans=pd.Series(spans, index=pairs.index, dtype=object),
        error_type=pairs["transform"].map(token_labels.ERROR_TYPE_OF).astype(object).where(lambda types: types.notna(), None),
    )
    return pairs[list(COLUMNS[:-1])], counts


def assign_validation(mixture: pd.DataFrame, settings: MixtureSettings) -> pd.Series:
    """`train` / `validation` per row: whole documents of each origin, a seeded share, capped."""
    split = pd.Series("train", index=mixture.index, dtype="string")
    for origin, rows in mixture.groupby("origin", sort=True):
        target = min(round(settings.validation_share * len(rows)), settings.max_validation_per_origin)
        if target == 0:
            continue
        documents = rows["doc_id"].drop_duplicates().to_numpy()
        order = rng_for(settings.seed, f"validation:{origin}").permutation(len(documents))
        sizes = rows.groupby("doc_id").size()
        chosen, taken = [], 0
        for position in order:
            if taken >= target:
                break
            chosen.append(documents[position])
            taken += int(sizes[documents[position]])
        split[rows.index[rows["doc_id"].isin(chosen)]] = "validation"
    return split


def build_mixture(
    training: Mapping[str, pd.DataFrame], evaluation: Mapping[str, pd.DataFrame], settings: MixtureSettings
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The mixture and its report (per origin: available, sampled, removed for leakage, train, validation)."""
    missing = sorted((set(settings.sources) | set(settings.synthetic_documents)) - set(training))
    if missing:
        raise FactlabError(f"mixture corpora not given as training inputs: {missing}")
    parts, report = [], {"origins": {}, "synthetic": {}}
    for name, limit in sorted(settings.sources.items()):
        rows = corpus_pairs(name, training[name])
        sampled = sample_rows(rows, limit, rng_for(settings.seed, name))
        parts.append(sampled)
        report["origins"][name] = {"available": len(rows), "sampled": len(sampled)}
    synthetic, synthetic_counts = synthetic_pairs(training, settings)
    report["synthetic"] = synthetic_counts
    if not synthetic.empty:
        for (task, origin), rows in synthetic.groupby(["task", "origin"], sort=True):
            report["origins"][f"{task}:{origin}"] = {"available": len(rows), "sampled": len(rows)}
        parts.append(synthetic.assign(origin=synthetic["task"] + ":" + synthetic["origin"]))
    mixture = pd.concat(parts, ignore_index=True)
    before = len(mixture)
    mixture = mixture.drop_duplicates(["text_a", "text_b"]).reset_index(drop=True)
    report["dropped_duplicate_pairs"] = before - len(mixture)
    index = EvaluationIndex.build(evaluation_texts(dict(evaluation)), settings.leakage_ngram)
    leaks = leaking_rows(mixture, index)
    for origin, rows in mixture.groupby("origin", sort=True):
        counts = leaks[rows.index].value_counts().sort_index()
        report["origins"][origin]["removed_leakage"] = int(counts.sum())
        report["origins"][origin]["removed_leakage_by_benchmark"] = {str(k): int(v) for k, v in counts.items()}
    mixture = mixture[leaks.isna().to_numpy()].reset_index(drop=True)
    mixture["split"] = assign_validation(mixture, settings)
    for origin, rows in mixture.groupby("origin", sort=True):
        report["origins"][origin]["train"] = int((rows["split"] == "train").sum())
        report["origins"][origin]["validation"] = int((rows["split"] == "validation").sum())
    report["pairs"] = len(mixture)
    report["train_pairs"] = int((mixture["split"] == "train").sum())
    report["validation_pairs"] = int((mixture["split"] == "validation").sum())
    report["evaluation_runs_indexed"] = len(index.runs)
    report["leakage_ngram"] = settings.leakage_ngram
    report["seed"] = settings.seed
    return mixture[list(COLUMNS)], report


def check_leakage(mixture: pd.DataFrame, evaluation: Mapping[str, pd.DataFrame], n: int) -> dict[str, Any]:
    """The leakage check rule: every mixture pair against every evaluated text. Raises if any leaks."""
    index = EvaluationIndex.build(evaluation_texts(dict(evaluation)), n)
    leaks = leaking_rows(mixture, index)
    report = {
        "pairs_checked": len(mixture),
        "evaluation_benchmarks": sorted(evaluation),
        "evaluation_runs_indexed": len(index.runs),
        "ngram": n,
        "leaking_pairs": int(leaks.notna().sum()),
    }
    if report["leaking_pairs"]:
        first = mixture.loc[leaks.notna()].iloc[0]
        raise FactlabError(
            f"leakage: {report['leaking_pairs']} training pairs share a {n}-word run with evaluated text "
            f"(first: origin {first['origin']}, benchmark {leaks[leaks.notna()].iloc[0]})"
        )
    return report

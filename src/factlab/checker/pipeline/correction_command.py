"""`factlab checker correction`: the checker's suggested corrections, judged by a scorer that did not choose them.

Inputs: a benchmark with human consistency labels and systems (FRANK: `results/data/frank.parquet`, validation and
test splits), its AlignScore scores with the checker's detail (`results/score/frank/alignscore.parquet`: per
sentence the evidence, per token the support), the checker folder (`results/checker/model`: its token localiser,
thresholds and model) and the judge: SummaC-ZS (factlab.score.summac) on `--judge-model`. SummaC-ZS reads the
source sentence by sentence with no chunks, no token head and no evidence choice, so it did not choose the edits;
it shares the aligner's weights, so it is independent of the correction procedure, not of the model.

1. Each test output's spans are read from its scores as `factlab check` reads them, and the checker suggests its
   corrections (factlab.checker.correct: one engine call for every candidate).
2. The judge scores the validation outputs, the test outputs and their corrected texts (those AlignScore
   scored); its threshold maximises balanced accuracy on the validation outputs.
3. systems.csv (factlab.metaeval.correction.system_rows): per system of the test split, the judge's consistent
   share before and after correction, over-correction with its Wilson interval at `--confidence`, ROUGE-L F1 of
   the changed outputs to their originals.
4. restore.csv: on `--synthetic-per-transform` sentences of the test sources per transform (seeded; the
   documents no training uses, as the leakage check guarantees), corrupted by the synthetic transforms
   (factlab.train.synthetic.transforms), each checked against its document by the checker: flagged, changed
   and exactly restored counts per transform and FRANK type.
corrections.parquet: per test output its spans, the corrected text, the edits and the judge's scores.
"""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from factlab.commands import json_object, write_report
from factlab.errors import DataError
from factlab.io import write_json, write_parquet, write_text
from factlab.metaeval.arguments import headline_number

if TYPE_CHECKING:
    import pandas as pd

LOG = logging.getLogger(__name__)
DATA_COLUMNS = ("example_id", "doc_id", "system", "split", "source", "output", "label")
VALIDATION, TEST = "validation", "test"
CORRECTED_SUFFIX = "#corrected"
SENTENCE_WORDS = (8, 40)  # a corrupted sentence's length in words: a claim, not a fragment or a paragraph
TRIES_PER_SENTENCE = 20  # candidate sentences tried per corrupted one a transform must yield


def register(commands: Any) -> None:
    parser = commands.add_parser("correction", help="the checker's corrections judged by SummaC-ZS, and exact restores")
    parser.add_argument("--data", required=True, help="results/data/frank.parquet")
    parser.add_argument("--scores", required=True, help="results/score/frank/alignscore.parquet (with tokens)")
    parser.add_argument("--checker", required=True, help="results/checker/model")
    parser.add_argument("--judge-model", required=True, help="SummaC-ZS's model: results/models/aligner or an NLI model")
    parser.add_argument("--judge-settings", type=json_object, required=True, help="JSON: score.summac_zs's settings")
    parser.add_argument("--sentence-splitter", required=True, choices=("pysbd", "spacy"))
    parser.add_argument("--transforms", nargs="+", required=True, help="synthetic transforms to restore")
    parser.add_argument("--synthetic-per-transform", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--confidence", type=float, required=True, help="of over-correction's interval")
    parser.add_argument("--out", required=True, help="systems.csv")
    parser.add_argument("--restore", required=True, help="restore.csv")
    parser.add_argument("--corrections", required=True, help="corrections.parquet")
    parser.add_argument("--report", required=True, help="report.json")
    parser.add_argument("--out-metrics", required=True, help="metrics.json")
    parser.set_defaults(func=run_correction)


def read_inputs(args: argparse.Namespace) -> tuple[pd.DataFrame, pd.DataFrame]:
    import pandas as pd

    data = pd.read_parquet(args.data)
    missing = [column for column in DATA_COLUMNS if column not in data.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}", file=args.data, field=missing[0])
    scores = pd.read_parquet(args.scores)
    for column in ("example_id", "score", "sentences", "tokens"):
        if column not in scores.columns:
            raise DataError(f"missing column {column!r} (AlignScore scored with localise)", file=args.scores, field=column)
    return data[data["split"].isin([VALIDATION, TEST])].reset_index(drop=True), scores


def suggested_corrections(checker: Any, test: pd.DataFrame, scores: pd.DataFrame) -> tuple[dict[str, list], dict[str, dict]]:
    """Per scored test output, its spans (as `factlab check` reads the scores) and the checker's correction (none for
    an output it finds consistent or is uncertain of)."""
    rows, details, outputs, sources = checker.table_rows(test, scores)
    corrections = checker.corrections(rows, details, outputs, sources)
    return {row["id"]: row["spans"] for row in rows}, corrections


def judge_scores(examples: pd.DataFrame, args: argparse.Namespace) -> tuple[dict[str, float], dict[str, Any]]:
    """SummaC-ZS of each (source, output) example: example_id -> score."""
    from factlab.commands import settings_from_mapping
    from factlab.models.engine import EngineSettings
    from factlab.models.loading import load_pair_scorer
    from factlab.preprocess.benchmark import sentence_units
    from factlab.score.summac import SummaCSettings, score_summac_zs

    settings = settings_from_mapping(args.judge_settings, SummaCSettings, "score.summac_zs")
    judge = load_pair_scorer(args.judge_model)
    sentences, _ = sentence_units(examples, "correction", args.sentence_splitter)
    scores, counts = score_summac_zs(examples, sentences, judge, settings, EngineSettings(progress=True))
    return dict(zip(scores["example_id"].astype(str), scores["score"].astype(float), strict=True)), counts


def judged_frame(
    test: pd.DataFrame, corrections: dict[str, dict], judged: dict[str, float], spans: dict[str, list]
) -> pd.DataFrame:
    """Per scored test output: label, whether it was changed, the judge before and after, ROUGE-L to the original."""
    import numpy as np
    import pandas as pd

    from factlab.metaeval.correction import rouge_l

    records = []
    for row in test.itertuples(index=False):
        example_id = str(row.example_id)
        if example_id not in spans or np.isnan(judged.get(example_id, np.nan)):
            continue
        corrected = (corrections.get(example_id) or {}).get("text", row.output)
        changed = corrected != row.output
        before = judged[example_id]
        after = judged.get(example_id + CORRECTED_SUFFIX, np.nan) if changed else before
        records.append(
            {
                "example_id": example_id,
                "system": str(row.system),
                "label": int(row.label),
                "output": str(row.output),
                "n_spans": len(spans[example_id]),
                "changed": changed,
                "corrected": corrected,
                "edits": json.dumps((corrections.get(example_id) or {}).get("edits", [])),
                "judge_before": before,
                "judge_after": after,
                "rouge_l": rouge_l(row.output, corrected) if changed else 1.0,
            }
        )
    return pd.DataFrame(records)


def corrupted_sentences(documents: pd.DataFrame, transforms: list[str], per_transform: int, seed: int) -> pd.DataFrame:
    """Per transform, up to `per_transform` sentences of the documents with that transform applied (seeded)."""
    import numpy as np
    import pandas as pd

    from factlab.runtime import load_spacy
    from factlab.text.sentences import split_sentences
    from factlab.text.words import whitespace_word_count
    from factlab.train.synthetic.transforms import TRANSFORM_FUNCTIONS, Pool, build_pools
    from factlab.train.token_labels import ERROR_TYPE_OF

    unknown = sorted(set(transforms) - set(TRANSFORM_FUNCTIONS) - {"claim_removed"})
    if unknown or "claim_removed" in transforms:
        raise DataError(f"transforms {unknown or ['claim_removed']} cannot corrupt a sentence", field="transforms")
    texts = documents["source"].astype(str).tolist()
    sentences = [split_sentences(text) for text in texts]
    nlp = load_spacy(disable=())
    pools = build_pools(list(nlp.pipe(texts, batch_size=16)), sentences)
    low, high = SENTENCE_WORDS
    candidates = [
        (index, s.text) for index, found in enumerate(sentences) for s in found if low <= whitespace_word_count(s.text) <= high
    ]
    rng = np.random.default_rng(seed)
    rows = []
    for transform in transforms:
        order = rng.permutation(len(candidates))[: per_transform * TRIES_PER_SENTENCE]
        made = 0
        for position, claim_doc in zip(order, nlp.pipe([candidates[i][1] for i in order], batch_size=32), strict=True):
            index, claim = candidates[position]
            corrupted = TRANSFORM_FUNCTIONS[transform](claim, claim_doc, Pool(pools, index), rng)
            if corrupted is None or corrupted == claim:
                continue
            rows.append(
                {
                    "transform": transform,
                    "error_type": ERROR_TYPE_OF.get(transform, ""),
                    "source": texts[index],
                    "original": claim,
                    "corrupted": corrupted,
                }
            )
            made += 1
            if made == per_transform:
                break
    return pd.DataFrame(rows, columns=["transform", "error_type", "source", "original", "corrupted"])


def run_correction(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.checker.api import Checker
    from factlab.metaeval.correction import restore_rows, system_rows
    from factlab.metaeval.detection import validation_threshold

    data, scores = read_inputs(args)
    # the outputs AlignScore scored (every one in a full run): those the checker reads and the judge scores
    data = data[data["example_id"].isin(scores.loc[scores["score"].notna(), "example_id"])]
    test, validation = data[data["split"] == TEST], data[data["split"] == VALIDATION]
    checker = Checker(args.checker, progress=True)
    spans, corrections = suggested_corrections(checker, test, scores)
    by_id = test.set_index("example_id")
    changed = [eid for eid, fix in corrections.items() if fix["text"] != by_id.loc[eid, "output"]]
    corrected = by_id.loc[changed].reset_index()
    corrected = corrected.assign(
        example_id=corrected["example_id"] + CORRECTED_SUFFIX, output=[corrections[eid]["text"] for eid in changed]
    )
    columns = ["example_id", "doc_id", "source", "output"]
    judged, judge_counts = judge_scores(pd.concat([validation[columns], test[columns], corrected[columns]]), args)
    tuning = validation.assign(score=validation["example_id"].map(judged))[["example_id", "score", "label"]]
    threshold = validation_threshold({"frank_validation": tuning})
    if threshold is None:
        raise DataError("the judge scored no validation outputs of both labels", file=args.data, field="label")
    frame = judged_frame(test, corrections, judged, spans)
    systems = system_rows(frame, threshold, args.confidence)

    synthetic = corrupted_sentences(
        test.drop_duplicates("doc_id").sort_values("doc_id"), list(args.transforms), args.synthetic_per_transform, args.seed
    )
    checked = checker.check(synthetic["source"].tolist(), synthetic["corrupted"].tolist())
    fixed = [
        fix["text"] if isinstance(fix, dict) else text
        for fix, text in zip(checked["correction"], synthetic["corrupted"], strict=True)
    ]
    restore = restore_rows(
        synthetic["transform"].tolist(),
        synthetic["error_type"].tolist(),
        [bool(len(found)) for found in checked["spans"]],
        synthetic["corrupted"].tolist(),
        fixed,
        synthetic["original"].tolist(),
    )
    restore_table = pd.DataFrame(
        [{**asdict(row), "restore_rate": row.restore_rate} for row in restore],
        columns=["transform", "error_type", "n_corrupted", "n_flagged", "n_changed", "n_restored", "restore_rate"],
    )
    write_text(systems.to_csv(index=False, float_format="%.6g"), args.out)
    write_text(restore_table.to_csv(index=False, float_format="%.6g"), args.restore)
    write_parquet(frame, args.corrections)
    report = {
        "judge": {
            "method": "summac_zs",
            "model": args.judge_model,
            "settings": args.judge_settings,
            "threshold": threshold,
            "threshold_source": f"maximises balanced accuracy on {len(tuning)} validation outputs",
            "counts": judge_counts,
        },
        "checker": {
            "folder": args.checker,
            "threshold": checker.threshold,
            "token_threshold": checker.settings.token_threshold,
            "localiser": checker.localiser is not None,
        },
        "test_outputs": len(test),
        "scored_test_outputs": len(frame),
        "with_spans": int((frame["n_spans"] > 0).sum()) if len(frame) else 0,
        "changed": len(changed),
        "synthetic": {"seed": args.seed, "per_transform": args.synthetic_per_transform, "sentences": len(synthetic)},
    }
    write_report(report, args.report)
    everything = systems[systems["system"] == "all"].iloc[0]
    write_json(
        {
            "judge_consistent_before": headline_number(everything["judge_consistent_before"]),
            "judge_consistent_after": headline_number(everything["judge_consistent_after"]),
            "over_correction": headline_number(everything["over_correction"]),
            "rouge_l_changed": headline_number(everything["rouge_l_changed"]),
            "restore_rate": {row.transform: headline_number(row.restore_rate) for row in restore},
        },
        args.out_metrics,
    )

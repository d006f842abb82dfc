"""`factlab calibrate LABELLED -o FOLDER`: a checker folder whose decisions are chosen on your own labelled pairs.

LABELLED is a file `factlab check` reads (CSV, TSV, JSONL, JSON) with a label column (`--label-column`, default
`label`: 1 or true = consistent, 0 or false = inconsistent). The checker (`--model`, default results/checker/model)
scores every pair; then (factlab.checker.calibration) the threshold is the one maximising balanced accuracy on them,
its expected balanced accuracy is cross-validated (`--folds`, `--seed`) with a bootstrap interval, and the uncertain
band is where neither verdict reaches `--precision` on them. FOLDER is the checker folder with those decisions in its
checker.json (`threshold`, `threshold_source`, `uncertain_band`, `calibration`) and a model card that says so;
`factlab check --model FOLDER` applies them, naming the calibration in force. Pairs the checker cannot score (no
words) are left out and counted. Fewer than 50 labelled examples of either class: a warning.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from factlab.checker.check_command import add_reading_arguments
from factlab.errors import DataErrors, FactlabError

# 1 and 0 also match True and False (equal hashes) and 1.0 and 0.0 (a column with a missing label reads as floats)
LABELS = {1: 1, 0: 0, "1": 1, "0": 0, "true": 1, "false": 0, "consistent": 1, "inconsistent": 0}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    parser.add_argument("labelled", help="CSV/TSV/JSONL/JSON file with source, output and label columns")
    parser.add_argument("-o", "--out", required=True, help="the calibrated checker folder to write")
    parser.add_argument("--model", default=None, help="the checker folder to calibrate (default results/checker/model)")
    parser.add_argument("--source-column", default="source")
    parser.add_argument("--output-column", default="output")
    parser.add_argument("--label-column", default="label", help="1/true = consistent, 0/false = inconsistent")
    parser.add_argument("--precision", type=float, default=0.8, help="each verdict's precision outside the uncertain band")
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds of the expected balanced accuracy")
    parser.add_argument("--seed", type=int, default=0, help="of the folds and the bootstrap")
    add_reading_arguments(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    parser.set_defaults(func=run_calibrate)


def binary_labels(values: list[Any], file: str, column: str) -> list[int]:
    """0/1 per label; every label that is neither is reported at once (record numbers from 1)."""
    problems, labels = [], []
    for position, value in enumerate(values):
        where = f"record {position + 1}"
        key = value.strip().lower() if isinstance(value, str) else value
        if key is None or key != key or key not in LABELS:  # key != key: NaN, a missing label
            problems.append(f"{where}, field {column!r}: label {value!r} is not 1/true (consistent) or 0/false (inconsistent)")
        else:
            labels.append(LABELS[key])
    if problems:
        raise DataErrors(file, problems)
    return labels


def run_calibrate(args: argparse.Namespace) -> None:
    import shutil

    from factlab.checker.api import Checker, score_frame
    from factlab.checker.calibration import MIN_PER_CLASS, calibrate
    from factlab.checker.folder import CARD_FILE, resolve_model, with_card_table
    from factlab.checker.inputs import Columns, read_pairs
    from factlab.data.judgeable import UNSCORABLE, judge_flags
    from factlab.io import atomic_folder, sha256_file, write_json

    if not 0.5 < args.precision < 1:
        raise FactlabError(f"--precision must be in (0.5, 1), got {args.precision}")
    if args.folds < 2:
        raise FactlabError(f"--folds must be at least 2, got {args.folds}")
    model, settings = resolve_model(args.model, option="--model")
    if not (Path(model) / CARD_FILE).is_file():
        raise FactlabError(f"--model {model}: not a checker folder (no {CARD_FILE}); calibrate one that factlab check reads")
    columns = Columns(args.source_column, args.output_column, None, args.label_column)
    pairs = read_pairs(args.labelled, columns, warn=lambda message: None)
    if pairs.attrs.get("label_column") is None:
        raise FactlabError(f"{args.labelled}: no label column {args.label_column!r} (name yours with --label-column)")
    labels = binary_labels(pairs["label"].tolist(), args.labelled, args.label_column)
    scorable = [not set(judge_flags(s, o)) & set(UNSCORABLE) for s, o in zip(pairs["source"], pairs["output"], strict=True)]
    checker = Checker(model, device=args.device, threads=args.threads, progress=not args.quiet, runtime=args.runtime)
    scored = score_frame(pairs[scorable], checker.scorer, checker.settings, progress=not args.quiet)
    by_id = dict(zip(scored["example_id"], scored["score"], strict=True))
    kept = [(label, by_id[str(i)]) for i, label, ok in zip(pairs["id"], labels, scorable, strict=True) if ok]
    result = calibrate(
        [label for label, _ in kept], [score for _, score in kept], precision=args.precision, folds=args.folds, seed=args.seed
    )
    if min(result.n_consistent, result.n_inconsistent) < MIN_PER_CLASS:
        print(
            f"factlab calibrate: warning: {result.n_consistent} consistent and {result.n_inconsistent} inconsistent "
            f"examples: under {MIN_PER_CLASS} of a class, the threshold and band are noisy",
            file=sys.stderr,
        )
    name = Path(args.labelled).name
    calibration = {
        **result.as_json(),
        "file": name,
        "sha256": sha256_file(args.labelled),
        "unscorable_left_out": len(pairs) - len(kept),
        "precision_target": args.precision,
        "folds": args.folds,
        "seed": args.seed,
        "previous_threshold": settings.threshold,
        "previous_threshold_source": settings.threshold_source,
    }
    source = f"calibrated on {name} ({result.n} pairs, factlab calibrate)"
    calibrated = settings.__class__(
        **{
            **settings.as_json(),
            "threshold": result.threshold,
            "threshold_source": source,
            "uncertain_band": [result.band_low, result.band_high],
            "calibration": calibration,
        }
    )
    with atomic_folder(args.out) as staging:
        for item in Path(model).iterdir():
            if item.name in (CARD_FILE, "README.md"):
                continue
            (shutil.copytree if item.is_dir() else shutil.copy2)(item, staging / item.name)
        write_json(calibrated.as_json(), staging / CARD_FILE)
        card = (Path(model) / "README.md").read_text() if (Path(model) / "README.md").is_file() else ""
        (staging / "README.md").write_text(calibration_card(calibration, source) + with_card_table(card, calibrated))
    if not args.quiet:
        print(summary(calibration, args.out), file=sys.stderr)


def calibration_card(calibration: dict[str, Any], source: str) -> str:
    band = f"[{calibration['band_low']:.4g}, {calibration['band_high']:.4g})"
    return (
        f"## Calibration in force\n\nThis folder's decisions were {source}: threshold {calibration['threshold']:.4g} "
        f"(was {calibration['previous_threshold']:.4g}: {calibration['previous_threshold_source']}), uncertain band "
        f"{band} at {calibration['precision_target']:.0%} precision per verdict (coverage {calibration['coverage']:.1%} "
        f"of the sample). Expected balanced accuracy ({calibration['folds']}-fold cross-validation): "
        f"{calibration['cv_balanced_accuracy']:.3f} [{calibration['cv_low']:.3f}, {calibration['cv_high']:.3f}]. "
        f"Sample: {calibration['n_consistent']} consistent, {calibration['n_inconsistent']} inconsistent "
        f"(sha256 {calibration['sha256'][:12]}).\n\n"
    )


def summary(calibration: dict[str, Any], out: str) -> str:
    return (
        f"factlab calibrate: {calibration['n']} pairs ({calibration['n_consistent']} consistent, "
        f"{calibration['n_inconsistent']} inconsistent, {calibration['unscorable_left_out']} unscorable left out) -> "
        f"{out}: threshold {calibration['threshold']:.4g}, uncertain band [{calibration['band_low']:.4g}, "
        f"{calibration['band_high']:.4g}), coverage {calibration['coverage']:.1%}; expected balanced accuracy "
        f"{calibration['cv_balanced_accuracy']:.3f} [{calibration['cv_low']:.3f}, {calibration['cv_high']:.3f}]"
    )

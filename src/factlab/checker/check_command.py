"""`factlab check INPUT -o OUTPUT.jsonl`: score your own (source, output) pairs (factlab.checker.api).

INPUT is a CSV, TSV, JSONL or JSON file with `source` and `output` columns (`--source-column`,
`--output-column` for other names; `--id-column`, `--label-column` when it has them), or `-`: standard input,
JSONL unless `--format` names another format (`--format` also reads a file whose suffix is not its format).
OUTPUT gets one JSON object per input row, in order, in strict JSON (a value that is not a finite number is
null); `-o -` writes them to standard output. They are written only when every row is scored (nothing partial on
error or Ctrl-C). While it runs, `OUTPUT.lock` beside OUTPUT keeps a second `factlab check` from writing the same
file. `--threshold` replaces the decision threshold recorded with the model. A summary (rows, flags, consistent
share) goes to stderr after the progress bars; `--quiet` leaves out both.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.errors import FactlabError

if TYPE_CHECKING:  # imported where the command runs: `factlab check --help` stays instant
    import pandas as pd

STDIO = "-"
FORMATS = ("csv", "tsv", "jsonl", "json")  # factlab.checker.inputs.FORMATS, here without importing pandas


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    parser.add_argument("input", help="CSV/TSV/JSONL/JSON file with a source and an output column; - reads stdin")
    parser.add_argument("-o", "--out", required=True, help="JSONL file to write: one object per input row; - writes stdout")
    parser.add_argument(
        "--format", choices=FORMATS, default=None, help="the input's format (default: its suffix; jsonl for stdin)"
    )
    parser.add_argument("--source-column", default="source")
    parser.add_argument("--output-column", default="output")
    parser.add_argument(
        "--id-column",
        default=None,
        help="the ids' column, which must exist (default: 'id' when the file has it; else ids are row numbers from 0)",
    )
    parser.add_argument("--label-column", default=None, help="copied to the results (default: 'label' when the file has it)")
    parser.add_argument(
        "--model",
        default=None,
        help="a checker folder (default results/checker/model), a trained aligner folder, or an NLI model's hub id / folder",
    )
    parser.add_argument(
        "--threshold",
        type=threshold_value,
        default=None,
        help="the decision threshold of 'consistent', in [0, 1] (default: the one recorded with the model)",
    )
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument(
        "--runtime",
        default="auto",
        choices=("auto", "torch", "openvino"),
        help="what runs the model: openvino (the checker folder's model.onnx, no torch) or torch; "
        "auto: openvino on a CPU where the folder has it",
    )
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: the runtime's default)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars and no summary")
    parser.set_defaults(func=run_check)


def threshold_value(text: str) -> float:
    """argparse type of --threshold: a number in [0, 1], the range of the scores."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text}") from None
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be in [0, 1] (scores are), got {text}")
    return value


def run_check(args: argparse.Namespace) -> None:
    if args.quiet:  # tqdm's own switch, read when tqdm is imported: below, by the modules that check
        os.environ["TQDM_DISABLE"] = "1"
    from factlab.checker.folder import resolve_model

    to_stdout = args.out == STDIO
    if not to_stdout:
        refuse_overwriting(args.input, args.out)
    with contextlib.nullcontext() if to_stdout else output_lock(Path(args.out)):
        model, settings = resolve_model(args.model, option="--model")
        if settings.toy:
            warn(f"{model} is a toy checker ({settings.toy_reason}): its scores mean nothing")
        pairs, results, reading = check_input(args, model)
        lines = json_lines(results, pairs)
        if to_stdout:
            sys.stdout.write("".join(lines))
            sys.stdout.flush()
        else:
            from factlab.io import atomic_path

            with atomic_path(args.out) as tmp:
                tmp.write_text("".join(lines), encoding="utf-8")
    if not args.quiet:
        line = summary(results, "<stdout>" if to_stdout else args.out)
        print(f"{line}; decisions: {decisions(settings, args.threshold)}; model read by {reading}", file=sys.stderr)


def check_input(args: argparse.Namespace, model: str) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """The pairs read from the input, their results, and what read the model (runtime and precision)."""
    from dataclasses import replace

    from factlab.checker.inputs import Columns, read_pairs

    columns = Columns(args.source_column, args.output_column, args.id_column, args.label_column)
    pairs = read_pairs(args.input, columns, format=args.format, warn=warn)
    from factlab.checker.api import Checker  # after the input is read: a bad file fails before torch loads

    checker = Checker(model, device=args.device, threads=args.threads, progress=not args.quiet, runtime=args.runtime)
    if args.threshold is not None:  # every use of the threshold reads the settings: `consistent`, corrections
        checker.settings = replace(
            checker.settings, threshold=args.threshold, threshold_source="--threshold", uncertain_band=None
        )
    return pairs, checker.check_pairs(pairs), f"{checker.runtime} in {checker.precision}"


def warn(message: str) -> None:
    print(f"factlab check: warning: {message}", file=sys.stderr)


def refuse_overwriting(input_path: str, out: str) -> None:
    """An error when OUT is INPUT: the same path, or the same file through a link."""
    if input_path == STDIO:
        return
    source, target = Path(input_path), Path(out)
    same = source.resolve() == target.resolve()
    if not same and source.exists() and target.exists():
        same = os.path.samefile(source, target)
    if same:
        raise FactlabError(f"--out {out} is the input {input_path}: writing it would overwrite the pairs")


@contextlib.contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on `OUT.lock` for the block, or refuse at once: another `factlab check` holds it.

    The lock file is removed on the way out; the kernel releases the lock of a killed process, so a file left behind
    blocks nobody."""
    lock = out.with_name(out.name + ".lock")
    descriptor = None
    try:
        descriptor = _acquire(lock, out)
        yield
    finally:
        if descriptor is not None:
            lock.unlink(missing_ok=True)
            os.close(descriptor)


def _acquire(lock: Path, out: Path) -> int:
    """A descriptor of `lock` holding its exclusive lock. A process that opened the file just before its holder
    removed it finds, once it holds the lock, that the path is no longer its file, and locks the path's new file."""
    import fcntl

    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise FactlabError(
                f"another factlab check is writing {out} (it holds {lock}): wait for it, or write elsewhere"
            ) from None
        try:
            current = os.path.samestat(os.fstat(descriptor), os.stat(lock))
        except FileNotFoundError:
            current = False
        if current:
            return descriptor
        os.close(descriptor)


def json_lines(results: pd.DataFrame, pairs: pd.DataFrame) -> list[str]:
    """One strict JSON line per result, with the row's label where the input has a label column."""
    has_label = pairs.attrs.get("label_column") is not None
    lines = []
    for record, label in zip(results.to_dict("records"), pairs["label"], strict=True):
        if has_label:
            record["label"] = label
        lines.append(json.dumps(_plain(record), ensure_ascii=False, allow_nan=False) + "\n")
    return lines


def summary(results: pd.DataFrame, out: str) -> str:
    scored = results["score"].notna()
    flagged = results["flags"].map(bool)
    verdicts = results.loc[scored, "verdict"]
    share = f"{(verdicts == 'consistent').mean():.1%}" if scored.any() else "n/a"
    uncertain = int((verdicts == "uncertain").sum())
    return (
        f"factlab check: {len(results)} rows -> {out}: {int(scored.sum())} scored, {int((~scored).sum())} without score, "
        f"{int(flagged.sum())} flagged (see 'flags'); consistent at threshold {results['threshold'].iloc[0]:.4g}: {share}"
        + (f", uncertain: {uncertain}" if uncertain else "")
    )


def decisions(settings: Any, threshold: float | None) -> str:
    """Which decisions are in force: the threshold's source and the uncertain band (factlab calibrate)."""
    if threshold is not None:
        return f"threshold {threshold:.4g} from --threshold, no uncertain band"
    band = settings.uncertain_band
    where = f", uncertain band [{band[0]:.4g}, {band[1]:.4g})" if band is not None else ", no uncertain band"
    return f"threshold {settings.threshold:.4g} ({settings.threshold_source}){where}"


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars and arrays as Python values, and every number that is not finite (a missing score
    or label read as NaN) as None."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value

"""`factlab check INPUT -o OUTPUT.jsonl`: score your own (source, output) pairs (factlab.checker.api).

INPUT is a CSV, TSV, JSONL or JSON file with `source` and `output` columns (`--source-column`,
`--output-column` for other names; `--id-column`, `--label-column` when it has them), or `-`: standard input,
JSONL unless `--format` names another format (`--format` also reads a file whose suffix is not its format).
OUTPUT gets one JSON object per input row, in order, in strict JSON (a value that is not a finite number is
null); `-o -` writes them to standard output as they come. A long file streams: each step's rows are appended to
`OUTPUT.partial` as they are checked (memory bounded by a step), and OUTPUT appears, whole, only when every row is
checked. After Ctrl-C or a crash, the same command resumes after the rows `OUTPUT.partial` holds, when it was
written for the same pairs, model and settings (`OUTPUT.partial.json` records them), and starts over otherwise. While
it runs, `OUTPUT.lock` beside OUTPUT keeps a second `factlab check` from writing the same file. `--threshold`
replaces the decision threshold recorded with the model. A summary (rows, flags, consistent share, what read the
model) goes to stderr after the progress bar; `--quiet` leaves out both.
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

    from factlab.checker.api import Checker

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
    add_reading_arguments(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars and no summary")
    parser.set_defaults(func=run_check)


def add_reading_arguments(parser: argparse.ArgumentParser) -> None:
    """How the checker's model runs: --device, --runtime (factlab.models.loading.RUNTIMES) and --threads; every
    command that loads a checker (check, calibrate)."""
    from factlab.models.loading import RUNTIMES

    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument(
        "--runtime",
        default="auto",
        choices=RUNTIMES,
        help="what runs the model: openvino (the checker folder's model.onnx, no torch) or torch; "
        "auto: openvino on a CPU where the folder has it",
    )
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: the runtime's default)")


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
        pairs, checker = check_input(args, model)
        tally = Tally()
        if to_stdout:
            for lines in step_lines(checker, pairs):
                sys.stdout.write("".join(lines))
                sys.stdout.flush()
                tally.add(lines)
        else:
            write_resumably(Path(args.out), pairs, checker, run_fingerprint(pairs, checker), tally)
    if not args.quiet:
        line = summary(tally, "<stdout>" if to_stdout else args.out)
        reading = f"{checker.runtime} in {checker.precision}"
        print(f"{line}; decisions: {decisions(settings, args.threshold)}; model read by {reading}", file=sys.stderr)


def check_input(args: argparse.Namespace, model: str) -> tuple[pd.DataFrame, Checker]:
    """The pairs read from the input, and the checker loaded to check them."""
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
    return pairs, checker


class Tally:
    """What the summary says of the rows written: counted from their JSON lines, resumed ones included."""

    def __init__(self) -> None:
        self.rows = self.scored = self.flagged = self.consistent = self.uncertain = 0
        self.threshold: float | None = None

    def add(self, lines: list[str]) -> None:
        for line in lines:
            row = json.loads(line)
            self.rows += 1
            self.scored += row["score"] is not None
            self.flagged += bool(row["flags"])
            self.consistent += row["verdict"] == "consistent"
            self.uncertain += row["verdict"] == "uncertain"
            self.threshold = row["threshold"]


def run_fingerprint(pairs: pd.DataFrame, checker: Checker) -> str:
    """What a partial output was written for: the pairs (ids, texts, labels), the model's identity and how it is read
    (the checker's settings, runtime and precision)."""
    import hashlib

    digest = hashlib.sha256()
    for column in ("id", "source", "output", "label"):
        digest.update(json.dumps(_plain(pairs[column].tolist()), ensure_ascii=False).encode())
    reading = {"model": checker.scorer.identity, "runtime": checker.runtime, "precision": checker.precision}
    digest.update(json.dumps({**checker.settings.as_json(), **reading}, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def resumed_lines(partial: Path, record: Path, fingerprint: str, ids: list[str]) -> list[str]:
    """The complete lines of `partial` when `record` says it was written for `fingerprint` and its rows are the first
    of `ids`; else none (a partial output of another input, model or setting is started over, with a warning)."""
    if not partial.is_file() or not record.is_file():
        return []
    try:
        written_for = json.loads(record.read_text()).get("fingerprint")
    except (OSError, json.JSONDecodeError):
        written_for = None
    text = partial.read_text(encoding="utf-8")
    lines = [line + "\n" for line in text.split("\n")[:-1]]  # a last line without its newline was cut mid-write
    try:
        found = [str(json.loads(line)["id"]) for line in lines]
    except (json.JSONDecodeError, KeyError, TypeError):
        found = None
    if written_for != fingerprint or found is None or found != ids[: len(found)]:
        warn(f"{partial} was written for other pairs, another model or other settings: checking from the first row")
        return []
    return lines


def step_lines(checker: Checker, pairs: pd.DataFrame, done: int = 0) -> Iterator[list[str]]:
    """The JSON lines of `pairs` after the first `done`, one list per step of the checker, in order."""
    for step in checker.check_steps(pairs.iloc[done:], done=done):
        yield json_lines(step, pairs.iloc[done : done + len(step)])
        done += len(step)


def write_resumably(out: Path, pairs: pd.DataFrame, checker: Checker, fingerprint: str, tally: Tally) -> None:
    """Append each step's lines to `OUT.partial` (resuming after the rows it holds: `resumed_lines`), then move it
    to `out` when every row is written. Ctrl-C leaves the partial output, and says how to resume."""
    partial, record = out.with_name(out.name + ".partial"), out.with_name(out.name + ".partial.json")
    kept = resumed_lines(partial, record, fingerprint, pairs["id"].astype(str).tolist())
    if kept:
        warn(f"resuming after the {len(kept)} rows {partial} holds")
    else:
        from factlab.io import atomic_path

        with atomic_path(record) as tmp:
            tmp.write_text(json.dumps({"fingerprint": fingerprint}) + "\n")
    partial.write_text("".join(kept), encoding="utf-8")  # drops a line cut mid-write
    tally.add(kept)
    try:
        with partial.open("a", encoding="utf-8") as handle:
            for lines in step_lines(checker, pairs, done=len(kept)):
                handle.write("".join(lines))
                handle.flush()
                os.fsync(handle.fileno())
                tally.add(lines)
    except KeyboardInterrupt:  # counted from the file: Ctrl-C may land between a step's write and its tally
        kept_rows = partial.read_bytes().count(b"\n")  # complete lines: a resume drops a line cut mid-write
        warn(f"{kept_rows} of {len(pairs)} rows kept in {partial}: the same command resumes after them")
        raise
    os.replace(partial, out)
    record.unlink(missing_ok=True)


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


def summary(tally: Tally, out: str) -> str:
    share = f"{tally.consistent / tally.scored:.1%}" if tally.scored else "n/a"
    threshold = "n/a" if tally.threshold is None else f"{tally.threshold:.4g}"
    return (
        f"factlab check: {tally.rows} rows -> {out}: {tally.scored} scored, {tally.rows - tally.scored} without score, "
        f"{tally.flagged} flagged (see 'flags'); consistent at threshold {threshold}: {share}"
        + (f", uncertain: {tally.uncertain}" if tally.uncertain else "")
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

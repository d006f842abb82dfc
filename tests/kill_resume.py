"""Killed twice, resumed, bit-identical (make rerun-identical, in CI after the smoke DAG).

    python tests/kill_resume.py COPY REFERENCE [--forcerun RULE --model FILE --training-log LOG --training-marker TEXT
                                                --score-logs GLOB --score-marker TEXT]

COPY is a copy of the smoke directory REFERENCE (built and up to date). In COPY the aligner is retrained
and everything downstream rebuilt (`--forcerun train_aligner`: the training, every scoring job, the
meta-evaluation and the paper), and the run is killed with SIGKILL (the whole process group, as a lost
node or the OOM killer would) twice: in the middle of the training and in the middle of the first
scoring job. Each time `snakemake --unlock` then `snakemake --rerun-incomplete` resumes. Then every artefact in COPY must be
byte-identical to REFERENCE's, the first run's: the retrained model, the scores, the meta-evaluation and
the paper tables and figures. Exempt, and listed: files that record how long something took or when
(timings, the benchmark: files, logs, the PDF's creation date).

The defaults are the smoke check's (`make rerun-identical`); the options point it at another training, e.g. the
default DAG's QASem parser killed in its second epoch and its QASemConsistency scoring killed a fifth of the way:

    python tests/kill_resume.py COPY REFERENCE --forcerun train_qasem_parser \\
        --model results/models/qasem_parser/model.safetensors --training-log logs/train/train_qasem_parser.log \\
        --training-marker "epoch 2 step 100/" --score-logs "logs/score/qasem_consistency/qasem_consistency.0.log" \\
        --score-marker " 20%|" --wait-seconds 3600
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

COMPARED = ("results", "paper/tables", "paper/figures")
# What a rerun cannot reproduce: wall-clock measurements. Matched on the path relative to the directory.
TIMING_FILES = (
    "results/benchmarks/scoring_throughput.json",  # pairs per second of this run
    "results/checker/check_latency.json",  # factlab check's cold start and seconds per example in this run
    "paper/tables/pipeline_cost.md",  # wall and CPU seconds of this run's jobs
    "paper/tables/pipeline_cost.tex",
    "results/paper/scoring_throughput.csv",  # examples, words and pairs per second of this run's scoring jobs
    "paper/tables/scoring_throughput.md",
    "paper/tables/scoring_throughput.tex",
)
TIMING_KEYS = ("seconds", "per_s", "elapsed")  # JSON reports: compared without these keys (pairs_per_s, score_seconds, …)
POLL_SECONDS = 0.5


def start(directory: Path, *args: str) -> subprocess.Popen:
    log = open(directory / ".snakemake" / "kill-resume.log", "a")  # noqa: SIM115 (the child writes it)
    return subprocess.Popen(
        ["snakemake", "--cores", "2", *args], cwd=directory, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def kill_when(
    directory: Path, process: subprocess.Popen, what: str, pattern: str, marker: str, since: float, wait: float
) -> None:
    """SIGKILL the run's process group once a job log matching `pattern`, written after `since`, shows `marker`."""
    deadline = time.monotonic() + wait
    while True:
        fresh = [path for path in directory.glob(pattern) if path.stat().st_mtime >= since]
        if any(marker in path.read_text(errors="replace") for path in fresh):
            break
        if process.poll() is not None:
            raise SystemExit(f"the run ended (exit {process.returncode}) before it was killed during {what}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not get under way within {wait:.0f} s")
        time.sleep(POLL_SECONDS)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    print(f"killed the run with SIGKILL during {what}", flush=True)
    # a killed Snakemake cannot release its lock on the directory: the README's resume recipe unlocks first
    subprocess.run(["snakemake", "--unlock"], cwd=directory, capture_output=True, check=True)


def comparable(path: Path) -> bytes:
    """The file's bytes; a JSON report without its timing entries (its counts and settings stay compared)."""
    data = path.read_bytes()
    if path.suffix != ".json":
        return data

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not any(key in k for key in TIMING_KEYS)}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    try:
        records = [json.loads(data)]
    except json.JSONDecodeError:  # JSON Lines
        try:
            records = [json.loads(line) for line in data.splitlines() if line.strip()]
        except json.JSONDecodeError:  # a broken report (a failed run's) differs by its bytes
            return data
    return json.dumps([strip(record) for record in records], sort_keys=True).encode()


def digests(directory: Path) -> dict[str, str]:
    found = {}
    for root in COMPARED:
        for path in sorted((directory / root).rglob("*")):
            relative = path.relative_to(directory).as_posix()
            if path.is_file() and relative not in TIMING_FILES and ".last-good" not in relative:
                found[relative] = hashlib.sha256(comparable(path)).hexdigest()
    return found


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("copy", type=Path, help="a copy of REFERENCE, where the run is killed and resumed")
    parser.add_argument("reference", type=Path, help="the built, up-to-date directory whose artefacts must be matched")
    parser.add_argument("--forcerun", default="train_aligner", help="the training rerun with everything downstream")
    parser.add_argument("--model", default="results/models/aligner/model.safetensors", help="that training's model")
    parser.add_argument("--training-log", default="logs/train/train_aligner.log")
    parser.add_argument("--training-marker", default=" step ", help="killed once the training's log shows this")
    parser.add_argument("--score-logs", default="logs/score/**/*.log", help="glob of the score-stage job logs")
    parser.add_argument("--score-marker", default="", help="killed once a fresh score log shows this ('' = at its start)")
    parser.add_argument("--wait-seconds", type=float, default=900, help="the longest wait for each kill's marker")
    return parser.parse_args()


def main() -> int:
    args = arguments()
    copy, reference = args.copy.resolve(), args.reference.resolve()
    trained_before = (copy / args.model).stat().st_mtime

    since = time.time() - 1
    run = start(copy, "--forcerun", args.forcerun)
    kill_when(copy, run, args.forcerun, args.training_log, args.training_marker, since, args.wait_seconds)
    # Snakemake removed the training's outputs when the job started (or flags them incomplete): it must not
    # take what a killed job left for a finished model
    dry = subprocess.run(["snakemake", "--cores", "2", "-n", "--rerun-incomplete"], cwd=copy, capture_output=True, text=True)
    if f"rule {args.forcerun}:" not in dry.stdout + dry.stderr:
        raise SystemExit(f"after the kill, Snakemake does not rerun {args.forcerun}")

    since = time.time() - 1
    run = start(copy, "--rerun-incomplete")
    kill_when(copy, run, "a score-stage job", args.score_logs, args.score_marker, since, args.wait_seconds)

    resumed = start(copy, "--rerun-incomplete")
    if resumed.wait() != 0:
        raise SystemExit(f"the resumed run failed (exit {resumed.returncode}); see .snakemake/kill-resume.log")
    if (copy / args.model).stat().st_mtime <= trained_before:
        raise SystemExit(f"{args.model} was not retrained")

    ours, theirs = digests(copy), digests(reference)
    differing = sorted(path for path in ours.keys() | theirs.keys() if ours.get(path) != theirs.get(path))
    print(f"compared {len(theirs)} artefacts under {', '.join(COMPARED)}; exempt (timings): {', '.join(TIMING_FILES)}")
    if differing:
        print("not identical after the kills and resumes:", *differing, sep="\n  ")
        return 1
    print("every artefact is byte-identical to the first run's")
    return 0


if __name__ == "__main__":
    sys.exit(main())

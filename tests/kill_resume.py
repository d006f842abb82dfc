"""Killed twice, resumed, bit-identical (make rerun-identical, in CI after the smoke DAG).

    python tests/kill_resume.py COPY REFERENCE

COPY is a copy of the smoke directory REFERENCE (built and up to date). In COPY the aligner is retrained
and everything downstream rebuilt (`--forcerun train_aligner`: the training, every scoring job, the
meta-evaluation and the paper), and the run is killed with SIGKILL (the whole process group, as a lost
node or the OOM killer would) twice: in the middle of the training and in the middle of the first
scoring job. Each time `snakemake --unlock` then `snakemake --rerun-incomplete` resumes. Then every artefact in COPY must be
byte-identical to REFERENCE's, the first run's: the retrained model, the scores, the meta-evaluation and
the paper tables and figures. Exempt, and listed: files that record how long something took or when
(timings, the benchmark: files, logs, the PDF's creation date).
"""

from __future__ import annotations

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
    "paper/tables/pipeline_cost.md",  # wall and CPU seconds of this run's jobs
    "paper/tables/pipeline_cost.tex",
)
TIMING_KEYS = ("seconds", "per_s", "elapsed")  # JSON reports: compared without these keys (pairs_per_s, score_seconds, …)
POLL_SECONDS = 0.5


def start(directory: Path, *args: str) -> subprocess.Popen:
    log = open(directory / ".snakemake" / "kill-resume.log", "a")  # noqa: SIM115 (the child writes it)
    return subprocess.Popen(
        ["snakemake", "--cores", "2", *args], cwd=directory, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def kill_when(directory: Path, process: subprocess.Popen, what: str, pattern: str, marker: str, since: float) -> None:
    """SIGKILL the run's process group once a job log matching `pattern`, written after `since`, shows `marker`."""
    deadline = time.monotonic() + 900
    while True:
        fresh = [path for path in directory.glob(pattern) if path.stat().st_mtime >= since]
        if any(marker in path.read_text(errors="replace") for path in fresh):
            break
        if process.poll() is not None:
            raise SystemExit(f"the run ended (exit {process.returncode}) before it was killed during {what}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not get under way within 900 s")
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
        records = [json.loads(line) for line in data.splitlines() if line.strip()]
    return json.dumps([strip(record) for record in records], sort_keys=True).encode()


def digests(directory: Path) -> dict[str, str]:
    found = {}
    for root in COMPARED:
        for path in sorted((directory / root).rglob("*")):
            relative = path.relative_to(directory).as_posix()
            if path.is_file() and relative not in TIMING_FILES and ".last-good" not in relative:
                found[relative] = hashlib.sha256(comparable(path)).hexdigest()
    return found


def main() -> int:
    copy, reference = (Path(arg).resolve() for arg in sys.argv[1:3])
    model = "results/models/aligner/model.safetensors"
    trained_before = (copy / model).stat().st_mtime

    since = time.time() - 1
    run = start(copy, "--forcerun", "train_aligner")
    kill_when(copy, run, "train_aligner", "logs/train/train_aligner.log", " step ", since)  # after its first steps
    # Snakemake removed the training's outputs when the job started (or flags them incomplete): it must not
    # take what a killed job left for a finished model
    dry = subprocess.run(["snakemake", "--cores", "2", "-n", "--rerun-incomplete"], cwd=copy, capture_output=True, text=True)
    if "rule train_aligner:" not in dry.stdout + dry.stderr:
        raise SystemExit("after the kill, Snakemake does not rerun train_aligner")

    since = time.time() - 1
    run = start(copy, "--rerun-incomplete")
    kill_when(copy, run, "the first score-stage job", "logs/score/**/*.log", "", since)

    resumed = start(copy, "--rerun-incomplete")
    if resumed.wait() != 0:
        raise SystemExit(f"the resumed run failed (exit {resumed.returncode}); see .snakemake/kill-resume.log")
    if (copy / model).stat().st_mtime <= trained_before:
        raise SystemExit("the aligner was not retrained")

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

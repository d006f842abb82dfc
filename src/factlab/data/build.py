"""Build one benchmark parquet from downloaded files: adapt, validate, write atomically."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from factlab.data.schema import validate_benchmark, validate_table
from factlab.data.spec import BenchmarkSpec
from factlab.download.manifest import RawFiles
from factlab.errors import FactlabError
from factlab.io import atomic_path, write_json, write_parquet

log = logging.getLogger(__name__)

# Snakemake deletes a job's outputs before it runs it, so a failed rebuild (a bad edit to a custom
# benchmark) would lose the good parquet: each successful build is also copied here. A copy, not a
# hard link: DVC "unprotects" (copies anew) an output with more than one link, which changes its mtime
# and makes Snakemake rebuild everything downstream.
LAST_GOOD_DIR = ".last-good"


def last_good_path(out_path: str | Path) -> Path:
    """Where the last successful build of `out_path` is kept: <dir>/.last-good/<name>."""
    out = Path(out_path)
    return out.parent / LAST_GOOD_DIR / out.name


def keep_last_good(out_path: str | Path) -> Path:
    """Copy the freshly written `out_path` to its last-good place (replacing an older one atomically)."""
    kept = last_good_path(out_path)
    with atomic_path(kept) as staging:
        shutil.copyfile(out_path, staging)
    return kept


def build_benchmark(spec: BenchmarkSpec, raw: RawFiles, out_path: str | Path, report_path: str | Path) -> dict:
    """Run the adapter, validate, then write parquet and report. Returns the report.

    Validation happens before anything is written, so bad input leaves no artefact and
    leaves an earlier version of the output untouched; if the workflow has already removed it, the last
    successful build stays in .last-good/ beside it (named in the log).
    """
    try:
        built = spec.build(raw)
        if spec.kind == "benchmark":
            frame = validate_benchmark(built.frame, spec.name)
        else:
            frame = validate_table(built.frame, spec.name, spec.required, spec.unique)
    except FactlabError:
        kept = last_good_path(out_path)
        if kept.exists():
            log.error("%s: not rebuilt; the last good build is kept: cp %s %s", spec.name, kept, out_path)
        raise
    dropped = {k: int(v) for k, v in built.counts.items() if k.startswith("dropped")}
    report = {
        "name": spec.name,
        "kind": spec.kind,
        "role": spec.role,
        "datasets": list(spec.datasets),
        "rows": int(len(frame)),
        "counts": {k: int(v) for k, v in built.counts.items()},
        "dropped": int(sum(dropped.values())),
    }
    for key, value in dropped.items():
        if value:
            log.warning("%s: %s = %d", spec.name, key, value)
    write_parquet(frame, out_path)
    write_json(report, report_path)
    keep_last_good(out_path)
    log.info("%s: wrote %d rows to %s", spec.name, len(frame), out_path)
    return report

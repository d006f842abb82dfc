"""Build one benchmark parquet from downloaded files: adapt, validate, write atomically."""

from __future__ import annotations

import logging
from pathlib import Path

from factlab.download.manifest import RawFiles
from factlab.data.spec import BenchmarkSpec
from factlab.data.schema import validate_benchmark, validate_table
from factlab.io import write_json, write_parquet

log = logging.getLogger(__name__)


def build_benchmark(spec: BenchmarkSpec, raw: RawFiles, out_path: str | Path, report_path: str | Path) -> dict:
    """Run the adapter, validate, then write parquet and report. Returns the report.

    Validation happens before anything is written, so bad input leaves no artefact and
    leaves an earlier version of the output untouched.
    """
    built = spec.build(raw)
    if spec.kind == "benchmark":
        frame = validate_benchmark(built.frame, spec.name)
    else:
        frame = validate_table(built.frame, spec.name, spec.required, spec.unique)
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
    log.info("%s: wrote %d rows to %s", spec.name, len(frame), out_path)
    return report

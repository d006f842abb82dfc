"""How a reader looks at a finished run, checked on the smoke directory (make smoke-views, after dvc-check):

- `dvc metrics show`: every metrics file of dvc.yaml loads, and holds numbers;
- `dvc plots show`: every plot of dvc.yaml renders, without a missing file or field;
- `snakemake --report`: the report is written and holds every table (.md) and figure (.png) of the run's paper/.

    python tests/smoke_views.py .smoke
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml


def run(directory: Path, *command: str) -> tuple[str, str]:
    """(stdout, stderr) of a command that must succeed."""
    done = subprocess.run(command, cwd=directory, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout, done.stderr


def numbers(value: object) -> int:
    """How many numeric leaves a metrics.json value holds (booleans are not numbers)."""
    if isinstance(value, dict):
        return sum(numbers(item) for item in value.values())
    if isinstance(value, list):
        return sum(numbers(item) for item in value)
    return int(isinstance(value, int | float) and not isinstance(value, bool))


def check_metrics(directory: Path, declared: list[str]) -> None:
    revisions = json.loads(run(directory, "dvc", "metrics", "show", "--json")[0])
    shown = revisions.get("", revisions.get("workspace", {})).get("data", {})  # the workspace (no git here: "")
    for path in declared:
        entry = shown.get(path)
        if entry is None or "error" in entry or not numbers(entry.get("data")):
            sys.exit(f"dvc metrics show: {path} is missing, unreadable or empty: {entry}")
    print(f"dvc metrics show: {len(declared)} metrics files, each with numbers")


def check_plots(directory: Path, declared: list[dict]) -> None:
    output, warnings = run(directory, "dvc", "plots", "show", "--json")
    if re.search(r"^WARNING:", warnings, flags=re.MULTILINE):  # e.g. a field the plot names that its file lacks
        sys.exit(f"dvc plots show: {warnings}")
    shown = json.loads(output)
    if shown.get("errors"):
        sys.exit(f"dvc plots show: {shown['errors']}")
    names = [next(iter(plot)) for plot in declared]
    missing = [name for name in names if not shown.get("data", {}).get(name)]
    if missing:
        sys.exit(f"dvc plots show: no data for {missing}")
    print(f"dvc plots show: {len(names)} plots, no error")


def check_report(directory: Path) -> None:
    log = "".join(run(directory, "snakemake", "--report", ".snakemake/report.html"))
    added = set(re.findall(r"^Adding (\S+) \(", log, flags=re.MULTILINE))
    # the run's own tables and figures (a fresh smoke directory holds no others)
    wanted = {path.name for path in (directory / "paper" / "tables").glob("*.md")}
    wanted |= {path.name for path in (directory / "paper" / "figures").glob("*.png")}
    if not (directory / ".snakemake" / "report.html").is_file() or wanted - added:
        sys.exit(f"snakemake --report: missing {sorted(wanted - added)}")
    print(f"snakemake --report: {len(added)} entries, every one of the paper's {len(wanted)} tables and figures")


def main() -> None:
    directory = Path(sys.argv[1])
    dvc_yaml = yaml.safe_load((directory / "dvc.yaml").read_text())
    check_metrics(directory, dvc_yaml["metrics"])
    check_plots(directory, dvc_yaml["plots"])
    check_report(directory)


if __name__ == "__main__":
    main()

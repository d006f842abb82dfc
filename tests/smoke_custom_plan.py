"""Over the built smoke run: what adding one custom benchmark plans (`snakemake -n --configfile`): no training or
tuning job, no job that writes another benchmark's scores (the ensemble's stack is fitted for the custom benchmark
alone), no job of the checker folder (its thresholds are chosen on validation data only), and the custom benchmark
built, scored and reported.

    python tests/smoke_custom_plan.py .smoke config/smoke_custom.yaml
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

NEVER = re.compile(
    r"^(train_\w+|tune_\w+|build_training_mixture|check_training_leakage|fit_summac_conv|fit_token_reading|package_checker)$"
)
JOB = re.compile(r"^rule (\w+):$|^localrule (\w+):$")
WILDCARDS = re.compile(r"^\s+wildcards: (.*)$")


def planned_jobs(run: Path, configfile: Path) -> list[tuple[str, dict[str, str]]]:
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", str(configfile.resolve())],
        cwd=run,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"dry run failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    jobs: list[tuple[str, dict[str, str]]] = []
    for line in done.stdout.splitlines():
        if match := JOB.match(line):
            jobs.append((match.group(1) or match.group(2), {}))
        elif (match := WILDCARDS.match(line)) and jobs:
            jobs[-1][1].update(dict(item.split("=", 1) for item in match.group(1).split(", ")))
    return jobs


def main(run: Path, configfile: Path) -> int:
    import yaml

    custom = set(yaml.safe_load(configfile.read_text())["data"]["custom_benchmarks"])
    jobs = planned_jobs(run, configfile)
    rules = sorted({rule for rule, _ in jobs})
    problems = [f"plans {rule}" for rule in rules if NEVER.match(rule)]
    problems += [
        f"plans {rule} for {wildcards}"
        for rule, wildcards in jobs
        if rule.startswith(("score_", "merge_scores", "preprocess_", "build_benchmark", "fit_ensemble"))
        and (wildcards.get("benchmark") or wildcards.get("name")) not in custom
    ]
    for needed in ("build_benchmark", "score_alignscore", "report_localise", "check_custom_overlap"):
        if needed not in rules:
            problems.append(f"does not plan {needed} for the custom benchmark")
    print(f"a custom benchmark plans {len(jobs)} jobs: {', '.join(rules)}")
    if problems:
        print("custom benchmark plan:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))

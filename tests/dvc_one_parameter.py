"""CI check (make dvc-one-parameter): in a copy of the built smoke directory, change one parameter and
let DVC find and rerun what reads it, and nothing else.

    python tests/dvc_one_parameter.py DIR KEY VALUE STAGE RULE UNTOUCHED

`dvc status` must name STAGE alone, for KEY alone; `dvc repro` must then run RULE (a Snakemake rule
whose params include KEY), not UNTOUCHED (a rule of STAGE that does not read KEY) and no job of the
stages upstream of STAGE. Exit 1 with the reason otherwise.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

UPSTREAM = {"metaeval": ("download", "data", "preprocess", "train", "score")}


def run(directory: Path, *command: str) -> str:
    done = subprocess.run(command, cwd=directory, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


def stages_of_rules(directory: Path) -> dict[str, str]:
    """Rule name -> its stage (the rule file it is in)."""
    found = {}
    for path in (directory / "workflow" / "rules").glob("*.smk"):
        for name in re.findall(r"^rule (\w+):", path.read_text(), flags=re.M):
            found[name] = path.stem
    return found


def main(directory: Path, key: str, value: str, stage: str, rule: str, untouched: str) -> None:
    params_path = directory / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    node = params
    *parents, last = key.split(".")
    for part in parents:
        node = node[part]
    new_value = yaml.safe_load(value)
    if node[last] == new_value:
        sys.exit(f"{key} is already {value}: nothing would change")
    stage_of = stages_of_rules(directory)
    if stage_of.get(untouched) != stage:
        sys.exit(f"{untouched} is not a rule of stage {stage}")
    node[last] = new_value
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))

    status = json.loads(run(directory, "dvc", "status", "--json"))
    if list(status) != [stage] or status[stage] != [{"changed deps": {"params.yaml": {key: "modified"}}}]:
        sys.exit(f"dvc status after changing {key} should name stage {stage} for {key} alone; got {status}")

    output = run(directory, "dvc", "repro")
    ran = set(re.findall(r"^(?:local)?rule (\w+):", output, flags=re.M))
    upstream = sorted(name for name in ran if stage_of.get(name) in UPSTREAM.get(stage, ()))
    if rule not in ran or untouched in ran or upstream:
        sys.exit(
            f"dvc repro after changing {key}: expected {rule} to run, not {untouched}, and no {UPSTREAM.get(stage)} job; "
            f"ran {sorted(ran)}"
        )
    print(f"{key}={value}: dvc status named {stage}; dvc repro ran {len(ran)} rules: {sorted(ran)}")
    final = run(directory, "dvc", "status")
    if "up to date" not in final:
        sys.exit(f"dvc status after dvc repro is not up to date:\n{final}")


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), *sys.argv[2:])

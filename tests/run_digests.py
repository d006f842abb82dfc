"""Two runs compared through a manifest of their artefacts' digests (two full runs on one kind of CPU are bit-identical).

    python tests/run_digests.py write DIRECTORY MANIFEST     # after one run: every artefact's sha256
    python tests/run_digests.py compare DIRECTORY MANIFEST   # after another: what differs; exit 1 if anything does

A full run takes hours, so the second one is often on another day in another checkout: the manifest (JSON)
carries the first run's digests, with the commit (marked when the checkout had uncommitted changes) and the
CPU it ran on (trained models differ across CPU kernels, docs/reproducibility.md, "What is exact"). The artefacts and the timing
exemptions are `kill_resume`'s: everything under results/, paper/tables and paper/figures, JSON reports compared
without their seconds and rates.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

from kill_resume import TIMING_FILES, digests

# what makes a CPU's kernels differ (docs/reproducibility.md, "What is exact"): the model and its vector and matrix extensions
CPU_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")


def cpu_description() -> str:
    info: dict[str, str] = {}
    if Path("/proc/cpuinfo").exists():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            info.setdefault(name.strip(), value.strip())
    flags = set(info.get("flags", "").split())
    described = (
        f"{info.get('model name', platform.processor())} (family {info.get('cpu family', '?')} model {info.get('model', '?')})"
    )
    return f"{described}; {' '.join(flag for flag in CPU_FLAGS if flag in flags) or 'none of ' + ' '.join(CPU_FLAGS)}"


def manifest(directory: Path) -> dict[str, object]:
    if not directory.is_dir():
        raise SystemExit(f"{directory} is not a directory")
    git = subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=directory, capture_output=True, text=True
    )
    if git.returncode != 0:
        raise SystemExit(f"{directory} is not a git checkout: {git.stderr.strip()}")
    found = digests(directory)
    if not found:
        raise SystemExit(f"{directory} holds no artefact under results/, paper/tables or paper/figures")
    commit = git.stdout.strip() + ("+uncommitted changes" if dirty.stdout.strip() else "")
    return {"commit": commit, "cpu": cpu_description(), "exempt": list(TIMING_FILES), "digests": found}


def differences(ours: dict[str, str], theirs: dict[str, str]) -> dict[str, list[str]]:
    return {
        "differing": sorted(path for path in ours.keys() & theirs.keys() if ours[path] != theirs[path]),
        "only_in_manifest": sorted(theirs.keys() - ours.keys()),
        "only_here": sorted(ours.keys() - theirs.keys()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("write", "compare"))
    parser.add_argument("directory", type=Path, help="a built tree (results/, paper/)")
    parser.add_argument("manifest", type=Path)
    args = parser.parse_args()
    here = manifest(args.directory.resolve())
    if args.action == "write":
        args.manifest.write_text(json.dumps(here, indent=1, sort_keys=True) + "\n")
        print(f"{len(here['digests'])} artefacts of {args.directory} at {here['commit'][:12]} on {here['cpu']}")
        return 0
    recorded = json.loads(args.manifest.read_text())
    if recorded["exempt"] != here["exempt"]:
        print(f"note: the manifest exempted {recorded['exempt']}, this checkout exempts {here['exempt']}")
    found = differences(here["digests"], recorded["digests"])  # type: ignore[arg-type]
    same = len(here["digests"]) - len(found["differing"]) - len(found["only_here"])  # type: ignore[arg-type]
    print(f"here: {here['commit'][:12]} on {here['cpu']}; manifest: {recorded['commit'][:12]} on {recorded['cpu']}")
    print(f"byte-identical: {same}; " + "; ".join(f"{kind}: {len(paths)}" for kind, paths in found.items()))
    for kind, paths in found.items():
        if paths:
            print(f"{kind}:", *paths, sep="\n  ")
    return int(any(found.values()))


if __name__ == "__main__":
    sys.exit(main())

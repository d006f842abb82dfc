"""Rules' code inputs (factlab.codedeps): the static import closure of each command covers every
factlab module the command really imports, and an edit to one analysis reaches only its own rules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from factlab.cli import STAGES
from factlab.codedeps import command_code, module_closure
from factlab.metaeval.cli import COMMAND_MODULES as METAEVAL_COMMANDS
from factlab.paper.cli import COMMAND_MODULES as PAPER_COMMANDS
from factlab.preprocess.cli import COMMAND_MODULES as PREPROCESS_COMMANDS
from factlab.score.cli import COMMAND_MODULES as SCORE_COMMANDS
from factlab.train.cli import COMMAND_MODULES as TRAIN_COMMANDS

FRANK = "src/factlab/metaeval/published/frank.py"
COMMANDS = [
    ("download", None),
    ("data", None),
    *[("train", command) for command in TRAIN_COMMANDS],
    *[("preprocess", command) for command in PREPROCESS_COMMANDS],
    *[("score", command) for command in SCORE_COMMANDS],
    *[("metaeval", command) for command in METAEVAL_COMMANDS],
    *[("paper", command) for command in PAPER_COMMANDS],
]

# Builds the parser of one command as `factlab` does, then lists the factlab source files imported.
PROBE = """
import json, sys
from factlab.cli import build_parser
argv = sys.argv[1:]
build_parser(argv)
modules = [m for name, m in list(sys.modules.items()) if name.split(".")[0] == "factlab"]
files = sorted(m.__file__ for m in modules if getattr(m, "__file__", None))
print(json.dumps(files))
"""


@pytest.mark.parametrize(("stage", "command"), COMMANDS)
def test_static_closure_covers_what_the_command_imports(stage: str, command: str | None) -> None:
    argv = [stage] + ([command] if command else [])
    result = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True)
    imported = {path[path.index("src/factlab/") :] for path in json.loads(result.stdout)}
    missing = imported - set(command_code(stage, command))
    assert not missing, f"factlab {' '.join(argv)} imports files its rules would not list: {sorted(missing)}"


def test_frank_module_reaches_only_frank_commands() -> None:
    reaching = {(stage, command) for stage, command in COMMANDS if FRANK in command_code(stage, command)}
    assert reaching == {
        ("metaeval", "frank-correlations"),
        ("metaeval", "frank-williams"),
        ("metaeval", "frank-ablation"),
        ("metaeval", "frank-summary"),
        ("metaeval", "frank-scorers"),  # factlab's scorers under FRANK's protocol
        ("paper", "frank-table"),
        ("paper", "frank-williams-figure"),
        ("paper", "frank-ablation-figure"),
    }


def test_no_upward_imports() -> None:
    """No stage runs code of a later stage (train and preprocess run no scoring, metaeval or paper code)."""
    for stage, command in [
        *[("train", c) for c in TRAIN_COMMANDS],
        ("download", None),
        ("data", None),
        *[("preprocess", c) for c in PREPROCESS_COMMANDS],
        *[("score", c) for c in SCORE_COMMANDS],
    ]:
        later = ("/metaeval/", "/paper/") if stage == "score" else ("/score/", "/metaeval/", "/paper/")
        upward = [path for path in command_code(stage, command) if any(part in path for part in later)]
        assert not upward, (stage, command, upward)


def test_adapters_found_by_discovery_are_inputs_of_data_builds() -> None:
    files = command_code("data", "build")
    assert "src/factlab/data/adapters/summeval.py" in files and "src/factlab/data/adapters/qasrl.py" in files


def test_closure_includes_parent_packages_and_rejects_unknown_commands() -> None:
    assert module_closure(["factlab.models.qasem.lexicon"])[:3] == [
        "src/factlab/__init__.py",
        "src/factlab/errors.py",
        "src/factlab/models/__init__.py",
    ]
    assert list(STAGES) == ["download", "data", "preprocess", "train", "score", "metaeval", "paper", "report"]
    with pytest.raises(KeyError, match="no command"):
        command_code("metaeval", "frank-everything")


def test_a_cached_closure_is_not_changed_by_a_caller_editing_its_copy() -> None:
    """The workflow asks for one command's closure once per job, from a cache: a rule that appends to the list it got
    must not change what the next rule gets."""
    first = command_code("score", "ensemble-fit")
    expected = list(first)
    first.append("src/factlab/not_a_module.py")
    assert command_code("score", "ensemble-fit") == expected
    assert "src/factlab/score/ensemble.py" in expected

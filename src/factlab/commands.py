"""Lazy sub-commands: a stage CLI imports only the module of the command it runs.

So `factlab metaeval frank-correlations` executes the FRANK module and not the ScreenEval one, and
a workflow rule can list as inputs exactly the code its command executes (workflow/rules/common.smk).
A command module imports no heavy library at its top (torch, transformers, pandas, numpy, scipy, scikit-learn):
the functions that run its command import them, so `factlab <stage> [<command>] --help` answers at once
(tests/test_check_cli.py checks every command).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from factlab.errors import FactlabError
from factlab.io import write_json
from factlab.runtime import DEVICES, PRECISIONS

Settings = TypeVar("Settings")

LOGGER = logging.getLogger(__name__)


def register_commands(parser: argparse.ArgumentParser, modules: Mapping[str, str], requested: str | None) -> None:
    """Sub-commands from `modules` (command -> module defining `register(commands)`); only the module
    of `requested` is imported when it is known, every module otherwise (help, errors)."""
    commands = parser.add_subparsers(dest="command", required=True)
    names = [modules[requested]] if requested in modules else sorted(set(modules.values()))
    for name in names:
        importlib.import_module(name).register(commands)


def add_device_arguments(parser: argparse.ArgumentParser, *, precision: bool) -> None:
    """--device (`runtime.DEVICES`) and, where the command runs a model's forward passes in a chosen precision,
    --precision (`runtime.PRECISIONS`); both required, as their values come from params.yaml."""
    parser.add_argument("--device", choices=DEVICES, required=True)
    if precision:
        parser.add_argument("--precision", choices=PRECISIONS, required=True, help="of the forward passes (bf16: autocast)")


def positive_int(value: str) -> int:
    """argparse type: an integer >= 1."""
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return number


def confidence_level(value: str) -> float:
    """argparse type: a confidence level strictly between 0 and 1."""
    level = float(value)
    if not 0 < level < 1:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, got {value}")
    return level


def add_bootstrap_arguments(parser: argparse.ArgumentParser, resampled: str = "") -> None:
    """--resamples, --confidence and --seed of a bootstrap interval (metaeval.bootstrap_resamples, .confidence, .seed),
    all required; `resampled` names what is drawn with replacement (e.g. "document") in the help."""
    parser.add_argument("--resamples", type=positive_int, required=True, help=f"{resampled} bootstrap resamples".strip())
    parser.add_argument("--confidence", type=confidence_level, required=True, help="of the intervals, e.g. 0.95")
    parser.add_argument("--seed", type=int, required=True, help="the bootstrap's seed")


def json_object(text: str) -> dict[str, Any]:
    """argparse type: a JSON object (anything else is a usage error)."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"not a JSON object: {text}")
    return value


def max_examples(value: str) -> int | None:
    """argparse type of --max-examples: 'all' (None) or a positive N (the first N example_ids)."""
    return None if value == "all" else positive_int(value)


def add_sample_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """--sample-examples ('all' or N, required) and --sample-seed: the seeded sample (score.sample, factlab.sampling)
    of the examples that `what` covers."""
    parser.add_argument(
        "--sample-examples", type=max_examples, required=True, help=f"'all' or N: the seeded sample of N {what} (score.sample)"
    )
    parser.add_argument("--sample-seed", type=int, help="the sample's seed (score.sample.seed): with --sample-examples N")


def sample_record(args: argparse.Namespace) -> dict[str, Any]:
    """What a report records of the job's sample (`add_sample_arguments`): `sample`, where it drew one."""
    if args.sample_examples is None:
        return {}
    return {"sample": {"examples": args.sample_examples, "seed": args.sample_seed}}


def settings_from_mapping(values: Mapping[str, Any], cls: type[Settings], what: str) -> Settings:
    """A settings dataclass from params.yaml values; an unknown key is an error naming the known ones."""
    known = {field.name for field in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - known)
    if unknown:
        raise FactlabError(f"unknown {what} settings {unknown}; known: {sorted(known)}")
    return cls(**values)


def settings_from_json(text: str, cls: type[Settings], what: str) -> Settings:
    """`settings_from_mapping` of a rule's --settings JSON object."""
    values = json.loads(text)
    if not isinstance(values, dict):
        raise FactlabError("--settings must be a JSON object")
    return settings_from_mapping(values, cls, what)


def write_report(report: dict[str, Any], path: str | Path) -> None:
    """A step's counts as JSON, and the same line in the job's log."""
    write_json(report, path)
    LOGGER.info("%s: %s", path, json.dumps(report, sort_keys=True))

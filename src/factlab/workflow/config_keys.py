"""The workflow's config as the user wrote it: misspelt keys and bad names, said in one line each, and which config
file declares a key.

Snakemake's schema validation (`snakemake.utils.validate`) reports an unexpected key with the whole schema of the
object it lies in (20 to 55 lines for a custom benchmark) and the object itself, so the one line that matters is
buried. The workflow checks the keys first with `key_problems`, against the same schema
(`workflow/schemas/params.schema.yaml`): a key that an object with `additionalProperties: false` does not list, and a
key that `propertyNames` refuses (a pattern or an enum), each with the nearest valid key (difflib). Types, values and
required keys are left to the schema validation.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

# The one name pattern the schema gives (benchmark names): what a name may hold, and how to make one of a bad name.
NAME_PATTERN = "^[A-Za-z0-9_]+$"
NAME_RULE = "letters, digits and _ only"


def nearest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like `word` (difflib's ratio), however unlike; None without candidates."""
    found = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=0.0)
    return found[0] if found else None


def _dotted(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _name_problem(key: Any, rule: Mapping[str, Any], where: str) -> str | None:
    """Why `propertyNames` (`rule`) refuses `key`, with the nearest valid name; None if it does not."""
    name = key if isinstance(key, str) else str(key)
    if "enum" in rule and key not in rule["enum"]:
        return f"{where}: unknown name {name!r}; the nearest valid one is {nearest(name, map(str, rule['enum']))!r}"
    pattern = rule.get("pattern")
    if pattern and not (isinstance(key, str) and re.search(pattern, key)):
        if pattern == NAME_PATTERN:
            valid = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or "name"
            return f"{where}: name {name!r} may hold {NAME_RULE}; the nearest valid one is {valid!r}"
        return f"{where}: name {name!r} does not match {pattern!r}"
    return None


def key_problems(config: Any, schema: Mapping[str, Any], where: str = "") -> list[str]:
    """One line per misspelt key or bad name in `config` (the parsed YAML) under `schema` (a JSON schema of objects
    with `properties`, `additionalProperties` and `propertyNames`), in the config's order: the dotted place, the key
    and the nearest valid one."""
    if not isinstance(config, Mapping) or not isinstance(schema, Mapping):
        return []
    properties: Mapping[str, Any] = schema.get("properties", {})
    other = schema.get("additionalProperties", True)
    names = schema.get("propertyNames")
    problems = []
    for key, value in config.items():
        if key in properties:
            problems += key_problems(value, properties[key], _dotted(where, key))
            continue
        if other is False:
            suggestion = nearest(str(key), properties)
            problems.append(f"{where or 'the config'}: unknown key {str(key)!r}; the nearest valid one is {suggestion!r}")
            continue
        problem = _name_problem(key, names, where or "the config") if isinstance(names, Mapping) else None
        if problem:
            problems.append(problem)
        elif isinstance(other, Mapping):
            problems += key_problems(value, other, _dotted(where, key))
    return problems


def schema_key_problems(config: Any, schema_path: str | Path) -> list[str]:
    """`key_problems` of `config` against the YAML schema at `schema_path` (read with libyaml where PyYAML has it:
    every workflow read parses the schema)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return key_problems(config, yaml.load(Path(schema_path).read_text(), Loader=loader))  # noqa: S506 (a safe loader)


def declaring_file(files: Sequence[str | Path], keys: Sequence[str]) -> str | None:
    """The file that gives the nested key `keys` its value: of `files` (YAML, each merged over the ones before it, as
    Snakemake merges `configfile:` and `--configfile`), the last that has it; None where none does (`--config`)."""
    for path in reversed(files):
        try:
            node: Any = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError):
            continue
        for key in keys:
            node = node.get(key) if isinstance(node, Mapping) else None
        if node is not None:
            return str(path)
    return None

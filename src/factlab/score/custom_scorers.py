"""A researcher's own scorers (`scorers.custom` in a --configfile): one entry each, through one of three doors.

- `scores`: score files the user computed elsewhere, one per benchmark ({benchmark: file}; JSONL, JSON, CSV, TSV or
  parquet), keyed by `example_id` (as `factlab benchmarks export` writes them), with a `score` and optionally
  `sentence_scores` (one per exported sentence unit) and `spans` (character [start, end) offsets of unsupported
  content in the output, each optionally with its own score: [start, end, score]).
- `python`: `package.module:function` or `path/to/file.py:function`, called by the pipeline's sharded jobs as
  `function(sources, outputs)` in batches; it returns one score per pair, or one {"score", "spans"} record per pair.
- `model`: a hub id or local folder of a family factlab reads: an NLI cross-encoder (`family: nli`), scored as
  SummaC-ZS reads NLI (score.summac_zs's settings) with the entry's label names; or an aligner (`family: alignscore`:
  a released AlignScore `.ckpt` or a factlab aligner folder), scored as AlignScore with the tuned chunking.

Each becomes `results/score/<benchmark>/<name>.parquet`, the table every built-in scorer writes, so the
meta-evaluation, the report and the paper take it as they take factlab's own. The workflow checks every entry while
it parses (`check_custom_scorers`), before any job starts: a bad entry stops the run with every problem at once.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.errors import ConfigError, DataError

if TYPE_CHECKING:
    import pandas as pd

DOORS = ("scores", "python", "model")
MODEL_FAMILIES = ("nli", "alignscore")
SCORE_FORMATS = (".jsonl", ".json", ".csv", ".tsv", ".parquet")
# A scorer's name is a file stem and a workflow wildcard (score.smk: scorer=[a-z_]+).
NAME = re.compile(r"^[a-z][a-z_]*$")
ENTRY_KEYS = {
    "scores": {"scores", "higher_is_consistent", "allow_missing"},
    "python": {"python", "higher_is_consistent", "benchmarks", "batch_size", "spans"},
    "model": {"model", "family", "entailment_label", "contradiction_label", "higher_is_consistent", "benchmarks"},
}
PROBLEMS_SHOWN = 20
# An entry's record in the checks' cache: a record without every key is from another version, and read again.
CHECK_KEYS = {"stamp", "warnings", "localises"}
# What marks a local model folder: a transformers model's, or a factlab aligner's.
MODEL_FILES = ("config.json", "aligner.json")


@dataclass(frozen=True)
class CustomScorer:
    """One `scorers.custom` entry, its door's fields filled and the others at their defaults."""

    name: str
    door: str
    scores: dict[str, str] = field(default_factory=dict)  # benchmark -> score file (door `scores`)
    python: str = ""  # module:function (door `python`)
    model: str = ""  # hub id or folder (door `model`)
    family: str = "nli"
    entailment_label: str = "entailment"
    contradiction_label: str = "contradiction"
    higher_is_consistent: bool = True
    allow_missing: bool = False
    benchmarks: tuple[str, ...] = ()  # doors `python` and `model`: empty = every scored benchmark
    batch_size: int = 16
    spans: bool = False  # door `python`: the callable returns spans too

    def scored(self, benchmarks: Sequence[str]) -> list[str]:
        """Those of `benchmarks` this scorer scores, in their order."""
        chosen = set(self.scores) if self.door == "scores" else set(self.benchmarks or benchmarks)
        return [name for name in benchmarks if name in chosen]


def _entry_problems(name: str, entry: Any, builtin: Sequence[str]) -> list[str]:
    where = f"scorers.custom.{name}"
    if not NAME.match(name):
        return [f"{where}: a scorer's name is lower-case letters and underscores (a file name and a wildcard)"]
    if name in builtin:
        return [f"{where}: {name!r} is a built-in scorer's name (score.scorers); choose another"]
    if not isinstance(entry, Mapping):
        return [f"{where}: expected a mapping with one of {', '.join(DOORS)}, got {entry!r}"]
    doors = [door for door in DOORS if door in entry]
    if len(doors) != 1:
        return [f"{where}: give exactly one of {', '.join(DOORS)} (got {', '.join(doors) or 'none'})"]
    door = doors[0]
    problems = [
        f"{where}.{key}: not a key of a `{door}` scorer (keys: {', '.join(sorted(ENTRY_KEYS[door]))})"
        for key in sorted(set(entry) - ENTRY_KEYS[door])
    ]
    for key in ("higher_is_consistent", "allow_missing", "spans"):
        if key in entry and not isinstance(entry[key], bool):
            problems.append(f"{where}.{key}: true or false, got {entry[key]!r}")
    if door == "scores" and (
        not isinstance(entry["scores"], Mapping)
        or not entry["scores"]
        or not all(isinstance(path, str) and path for path in entry["scores"].values())
    ):
        problems.append(f"{where}.scores: a mapping of benchmark -> score file, got {entry['scores']!r}")
    if door == "python" and not (isinstance(entry["python"], str) and entry["python"].count(":") == 1):
        problems.append(f"{where}.python: 'package.module:function' or 'path/to/file.py:function', got {entry['python']!r}")
    if door == "model":
        if not isinstance(entry["model"], str) or not entry["model"]:
            problems.append(f"{where}.model: a hub id or a local folder, got {entry['model']!r}")
        if entry.get("family", "nli") not in MODEL_FAMILIES:
            problems.append(f"{where}.family: one of {', '.join(MODEL_FAMILIES)}, got {entry.get('family')!r}")
    batch_size = entry.get("batch_size", 1)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        problems.append(f"{where}.batch_size: a positive integer, got {entry['batch_size']!r}")
    if "benchmarks" in entry and not (
        isinstance(entry["benchmarks"], list) and all(isinstance(b, str) for b in entry["benchmarks"])
    ):
        problems.append(f"{where}.benchmarks: a list of benchmark names, got {entry['benchmarks']!r}")
    return problems


def custom_scorers(custom: Mapping[str, Any], builtin: Sequence[str] = ()) -> dict[str, CustomScorer]:
    """`scorers.custom` as CustomScorer entries; ConfigError listing every malformed entry at once."""
    problems = [problem for name, entry in sorted(custom.items()) for problem in _entry_problems(name, entry, builtin)]
    if problems:
        raise ConfigError("\n".join(problems))
    scorers = {}
    for name, entry in custom.items():
        door = next(door for door in DOORS if door in entry)
        values = {key: value for key, value in entry.items() if key != door}
        if "benchmarks" in values:
            values["benchmarks"] = tuple(values["benchmarks"])
        door_value = {str(b): str(path) for b, path in entry[door].items()} if door == "scores" else entry[door]
        scorers[name] = CustomScorer(name=name, door=door, **{door: door_value}, **values)
    return scorers


# --- the `scores` door: reading and checking a user's score file -------------------------------------------------


@dataclass(frozen=True)
class UserScores:
    """One score file read: a row per record (example_id, score, sentence_scores, spans), the record's location."""

    path: Path
    frame: pd.DataFrame  # columns example_id, score, sentence_scores (list or None), spans (list of [s, e, score])
    locations: list[str]
    problems: list[str]


def _records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    import pandas as pd

    from factlab.data.adapters.custom import iter_records

    if path.suffix.lower() == ".parquet":
        if not path.is_file():
            raise DataError("score file not found", file=path)
        frame = pd.read_parquet(path)
        return [(f"row {index + 1}", record) for index, record in enumerate(frame.to_dict("records"))]
    if path.suffix.lower() not in SCORE_FORMATS:
        raise DataError(f"unsupported format {path.suffix!r}: use {', '.join(SCORE_FORMATS)}", file=path)
    _, records = iter_records(path)
    return list(records)


def finite_number(value: Any) -> float | None:
    """`value` as a finite float, else None (NaN, inf, text, a boolean)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _list(value: Any) -> list[Any] | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):  # CSV cells: a JSON list
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return [value]
    return list(value) if hasattr(value, "__iter__") and not isinstance(value, (str, Mapping)) else [value]


def parse_span(value: Any) -> tuple[int, int] | tuple[int, int, float] | None:
    """[start, end], [start, end, score] or {"start", "end", "score"?}: character offsets, start < end; the score (the
    span's support) only where given, so that orientation never turns a missing one into a full one."""
    if isinstance(value, Mapping):
        value = [value.get("start"), value.get("end"), *([value["score"]] if "score" in value else [])]
    items = _list(value)
    if not items or len(items) not in (2, 3):
        return None
    start, end = items[0], items[1]
    if isinstance(start, bool) or isinstance(end, bool) or finite_number(start) is None or finite_number(end) is None:
        return None
    if float(start) != int(start) or float(end) != int(end) or not 0 <= int(start) < int(end):
        return None
    if len(items) == 2:
        return int(start), int(end)
    score = finite_number(items[2])
    return None if score is None else (int(start), int(end), score)


def read_user_scores(path: str | Path) -> UserScores:
    """A score file's records, every bad one named (location and field): a missing or duplicate example_id, a score
    that is missing, not a number, NaN or infinite, malformed sentence_scores or spans."""
    import pandas as pd

    path = Path(path)
    rows, locations, problems = [], [], []
    first_seen: dict[str, str] = {}
    for location, record in _records(path):
        example_id = record.get("example_id")
        if example_id is None or (isinstance(example_id, float) and math.isnan(example_id)) or str(example_id) == "":
            problems.append(f"{location}, field 'example_id': missing")
            continue
        example_id = str(example_id)
        if example_id in first_seen:
            problems.append(f"{location}, field 'example_id': {example_id!r} is given twice (first at {first_seen[example_id]})")
            continue
        first_seen[example_id] = location
        score = finite_number(record.get("score"))
        if score is None:
            problems.append(f"{location}, field 'score': {record.get('score')!r} is not a finite number")
            continue
        sentence_scores = _list(record.get("sentence_scores"))
        if sentence_scores is not None and any(finite_number(value) is None for value in sentence_scores):
            problems.append(f"{location}, field 'sentence_scores': not a list of finite numbers")
            continue
        spans_given = _list(record.get("spans"))
        spans = [parse_span(value) for value in spans_given or []]
        if any(span is None for span in spans):
            problems.append(f"{location}, field 'spans': each span is [start, end] or [start, end, score], 0 <= start < end")
            continue
        rows.append(
            {
                "example_id": example_id,
                "score": score,
                "sentence_scores": None if sentence_scores is None else [float(v) for v in sentence_scores],
                "spans": None if spans_given is None else [list(span) for span in spans if span is not None],
            }
        )
        locations.append(location)
    if not rows and not problems:
        problems.append("the file has no records")
    frame = pd.DataFrame(rows, columns=["example_id", "score", "sentence_scores", "spans"])
    return UserScores(path, frame, locations, problems)


def coverage_problems(
    scores: UserScores, data: pd.DataFrame, examples: pd.DataFrame, *, allow_missing: bool, benchmark: str
) -> tuple[list[str], dict[str, int]]:
    """Ids of `scores` against the benchmark (`data`: its whole table; `examples`: those the run keeps,
    preprocess.max_examples): an id not in the benchmark and a span past its output's end are problems, a kept example
    without a score is one unless `allow_missing`; scores of examples the run does not keep are counted and left out."""
    outputs = dict(zip(data["example_id"].astype(str), data["output"].astype(str), strict=True))
    kept = set(examples["example_id"].astype(str))
    problems = []
    for location, example_id, spans in zip(scores.locations, scores.frame["example_id"], scores.frame["spans"], strict=True):
        if example_id not in outputs:
            problems.append(f"{location}, field 'example_id': {example_id!r} is not an example of {benchmark}")
        elif spans is not None and any(span[1] > len(outputs[example_id]) for span in spans):
            problems.append(f"{location}, field 'spans': a span ends past the output ({len(outputs[example_id])} characters)")
    given = set(scores.frame["example_id"])
    missing = sorted(kept - given)
    if missing and not allow_missing:
        problems.append(
            f"{len(missing)} of {len(kept)} examples of {benchmark} have no score (the first: {missing[0]!r}); "
            "score them, or set allow_missing: true to evaluate the scored ones, counted and marked in every table"
        )
    counts = {
        "examples": len(kept),
        "examples_scored": len(kept) - len(missing),
        "examples_missing": len(missing),
        "scores_of_examples_not_kept": len((given & set(outputs)) - kept),
    }
    return problems, counts


# --- the `python` door ----------------------------------------------------------------------------------------------


def python_source(target: str) -> Path | None:
    """The source file of `module:function` or `file.py:function`, None where it is not found (or not Python)."""
    module = target.partition(":")[0]
    if module.endswith(".py"):
        return Path(module) if Path(module).is_file() else None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = None if spec is None else spec.origin
    return Path(origin) if origin and origin.endswith(".py") else None


def python_target_problem(target: str) -> str | None:
    """Why `module:function` or `file.py:function` cannot be called, found without importing it (a parse of the
    workflow must stay fast): the module or file is not found, or does not define the function."""
    module, _, function = target.partition(":")
    if module.endswith(".py"):
        source_path = Path(module)
        if not source_path.is_file():
            return f"file {module} not found (relative to the run's directory)"
    else:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError) as error:
            return f"module {module} cannot be imported ({error})"
        if spec is None or spec.origin is None:
            return f"module {module} cannot be imported (not found on the Python path)"
        source_path = Path(spec.origin)
    if source_path.suffix != ".py":
        return None  # a compiled module: checked when the job imports it
    tree = ast.parse(source_path.read_text(encoding="utf-8"), filename=str(source_path))
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    names = {node.name for node in tree.body if isinstance(node, definitions)}
    assigned = [name for node in tree.body if isinstance(node, ast.Assign) for name in node.targets]
    names |= {name.id for name in assigned if isinstance(name, ast.Name)}
    names |= {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    if function not in names:
        return f"{source_path} defines no {function!r}"
    return None


def load_callable(target: str) -> Any:
    """The function of `module:function` or `file.py:function`."""
    import importlib

    module_name, _, function = target.partition(":")
    if module_name.endswith(".py"):
        spec = importlib.util.spec_from_file_location(Path(module_name).stem, module_name)
        if spec is None or spec.loader is None:
            raise ConfigError(f"python scorer {target}: cannot load {module_name}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    if not callable(found := getattr(module, function, None)):
        raise ConfigError(f"python scorer {target}: {module_name} has no callable {function!r}")
    return found


# --- the whole entry, checked while the workflow parses -------------------------------------------------------------


@dataclass(frozen=True)
class CustomCheck:
    """What the checks of every entry found besides problems: warnings, and the scorers that localise (give
    per-sentence support or spans), which token localisation evaluates."""

    warnings: list[str]
    localising: list[str]


def scorer_problems(
    scorer: CustomScorer, benchmarks: Sequence[str], data_dir: Path, max_examples: Any
) -> tuple[list[str], list[str], bool]:
    """(problems, warnings, localises) of one entry: unknown benchmarks, unreadable or bad score files (every bad
    record), ids against the benchmark's built data table where it is built, a constant scorer (a warning), a python
    target that cannot be found, a model folder without config.json."""
    where = f"scorers.custom.{scorer.name}"
    problems: list[str] = []
    warnings: list[str] = []
    localises = scorer.spans if scorer.door == "python" else scorer.door == "model"
    named = list(scorer.scores) if scorer.door == "scores" else list(scorer.benchmarks)
    for name in named:
        if name not in benchmarks:
            problems.append(f"{where}: {name!r} is not a scored benchmark (score.benchmarks)")
    if scorer.door == "python" and (problem := python_target_problem(scorer.python)):
        problems.append(f"{where}.python: {problem}")
    if scorer.door == "model" and (scorer.model.startswith((".", "/")) or Path(scorer.model).exists()):
        if not (Path(scorer.model).is_file() or any((Path(scorer.model) / name).is_file() for name in MODEL_FILES)):
            problems.append(f"{where}.model: {scorer.model} is no model file or folder (no {' or '.join(MODEL_FILES)})")
    if scorer.door != "scores":
        return problems, warnings, localises
    import pandas as pd

    from factlab.preprocess.benchmark import select_examples

    scores_seen = []
    for benchmark, path in sorted(scorer.scores.items()):
        try:
            read = read_user_scores(path)
        except DataError as error:
            problems.append(f"{where}.scores.{benchmark}: {error}")
            continue
        bad = list(read.problems)
        data = data_dir / f"{benchmark}.parquet"
        if benchmark in benchmarks and data.is_file():
            limit = None if max_examples in (None, "all") else int(max_examples)
            table = pd.read_parquet(data)
            examples = select_examples(table, benchmark, limit)
            bad += coverage_problems(read, table, examples, allow_missing=scorer.allow_missing, benchmark=benchmark)[0]
        problems += [f"{where}.scores.{benchmark}: file {path}: {problem}" for problem in bad[:PROBLEMS_SHOWN]]
        if len(bad) > PROBLEMS_SHOWN:
            problems.append(f"{where}.scores.{benchmark}: file {path}: {len(bad)} problems in all")
        scores_seen += list(read.frame["score"])
        localises |= bool(read.frame["sentence_scores"].notna().any() or read.frame["spans"].notna().any())
    if len(scores_seen) > 1 and len(set(scores_seen)) == 1:
        warnings.append(f"{where}: every score is {scores_seen[0]!r}: a constant scorer ranks nothing (AUC 0.5)")
    return problems, warnings, localises


def check_custom_scorers(
    scorers: Mapping[str, CustomScorer],
    benchmarks: Sequence[str],
    *,
    data_dir: str | Path = "results/data",
    max_examples: Any = "all",
    cache: str | Path | None = None,
) -> CustomCheck:
    """Every entry's problems at once, as one ConfigError; else its CustomCheck. `cache`: a JSON file of the entries
    (with their files' sizes and mtimes, and the data tables') already checked, so an unchanged entry is read once,
    not on every `snakemake` call."""
    from factlab.io import write_json

    cache_file = Path(cache) if cache else None
    checked: dict[str, Any] = {}
    if cache_file and cache_file.is_file():
        try:
            checked = json.loads(cache_file.read_text())
        except (OSError, json.JSONDecodeError):
            checked = {}
    problems: list[str] = []
    warnings: list[str] = []
    localising: list[str] = []
    changed = False
    data_dir = Path(data_dir)
    for name, scorer in sorted(scorers.items()):
        files = [Path(path) for path in scorer.scores.values()] + [data_dir / f"{b}.parquet" for b in scorer.scores]
        stamp = json.dumps(
            [repr(scorer), list(benchmarks), str(max_examples)]
            + [(str(f), f.stat().st_size, f.stat().st_mtime_ns) if f.is_file() else str(f) for f in files],
            default=str,
        )
        if set(checked.get(name, {})) != CHECK_KEYS or checked[name]["stamp"] != stamp:
            found, warned, localises = scorer_problems(scorer, benchmarks, data_dir, max_examples)
            problems += found
            if found:
                continue
            checked[name] = {"stamp": stamp, "warnings": warned, "localises": localises}
            changed = True
        warnings += checked[name]["warnings"]
        localising += [name] if checked[name]["localises"] else []
    if cache_file and changed:
        write_json(checked, cache_file)
    if problems:
        raise ConfigError("\n".join([*problems, f"{len(problems)} problem(s) with scorers.custom: nothing was run"]))
    return CustomCheck(warnings, localising)

"""Which workflow rule writes a paper file, which params.yaml keys it reads, and which rules and keys are upstream.

Read from the text of workflow/rules/*.smk (snakefmt-formatted; nothing is imported or run there): a rule's
block is its indented body; its outputs are the string literals of its `output:` directive (report
captions and categories aside); its keys are the `param("…")` calls in its body plus those of the
module-level names and functions it uses (at any depth: `DETECTION_VALIDATION = detection_validation(…)` brings the
keys read in `detection_validation`).
A rule named by a `name:` directive (rules made in a loop) matches the names its literals can build.

Which jobs a file is made from, at any depth, is Snakemake's own answer (`file_upstream`: the DAG of every job, built
as `python -m factlab.workflow.dvcyaml` builds it, so the workflow is parsed there), since inputs are often lists of paths
computed in the rule files rather than `rules.<name>` references.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factlab.errors import FactlabError

RULE = re.compile(r"^(\s*)rule\s*(\w*)\s*:")
DIRECTIVE = re.compile(r"^\s*(\w+):")
PARAM = re.compile(r"""\bparam\(\s*["']([^"']+)["']\s*\)""")
TOP_LEVEL_NAME = re.compile(r"^(?:def\s+(\w+)\s*\(|([A-Za-z_]\w*)\s*=[^=])")
# A one-line string literal (the f of an f-string is left outside); matched left to right, so quotes pair up.
STRING = re.compile(r""""([^"\n]*)\"""")
DOCSTRING = re.compile(r'"""(?:.|\n)*?"""')


@dataclass(frozen=True)
class RuleText:
    name: str  # as written; a loop rule's name templates joined by " / "
    pattern: re.Pattern[str]  # full-matches the names the rule can have
    file: str
    outputs: tuple[str, ...]
    keys: tuple[str, ...]  # params.yaml keys, sorted


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _blank(line: str) -> bool:
    return not line.strip()


def _block_end(lines: list[str], start: int, indent: int, closers: str = "") -> int:
    """Index after the block opened at `start`: up to the next line indented <= `indent` (a line
    starting with one of `closers` at that indent still belongs to it)."""
    end = start + 1
    while end < len(lines):
        line = lines[end]
        if not _blank(line) and _indent(line) <= indent and not (closers and line.lstrip()[:1] in closers):
            break
        end += 1
    return end


def _top_level_keys(texts: Iterable[str]) -> dict[str, set[str]]:
    """Module-level names and functions of every rule file -> the keys they read (transitively)."""
    direct: dict[str, set[str]] = {}
    bodies: dict[str, str] = {}
    for text in texts:
        lines = DOCSTRING.sub('""', text).splitlines()
        for i, line in enumerate(lines):
            match = TOP_LEVEL_NAME.match(line)
            if not match or _indent(line) > 0:
                continue
            name = match.group(1) or match.group(2)
            if name == "param":  # the accessor itself
                continue
            body = "\n".join(lines[i : _block_end(lines, i, 0, closers=")]}")])
            bodies[name] = bodies.get(name, "") + "\n" + body
            direct.setdefault(name, set()).update(PARAM.findall(body))
    keys = {name: set(found) for name, found in direct.items()}
    changed = True
    while changed:  # names built from other names: to a fixed point
        changed = False
        for name, body in bodies.items():
            for other in _names_used(body, keys, exclude=name):
                if not keys[other] <= keys[name]:
                    keys[name] |= keys[other]
                    changed = True
    return keys


def _names_used(text: str, names: Iterable[str], exclude: str | None = None) -> list[str]:
    words = set(re.findall(r"\b[A-Za-z_]\w*\b", _without_strings(text)))
    return [name for name in names if name in words and name != exclude]


def _without_strings(text: str) -> str:
    """Code with string literals emptied (a word in a shell command is no use of a name); f-string
    fields kept, since they name variables."""
    return STRING.sub(lambda m: " ".join(re.findall(r"\{([^}]*)\}", m.group(1))), text)


def _literals(text: str, not_after: tuple[str, ...] = ()) -> list[str]:
    """The string literals of `text`, less those right after one of `not_after` (e.g. `caption=`)."""
    return [
        match.group(1)
        for match in STRING.finditer(text)
        if match.group(1) and not text[: match.start()].rstrip().endswith(not_after)
    ]


def _name_pattern(literals: list[str]) -> re.Pattern[str]:
    alternatives = [re.sub(r"\\\{[^}]*\\\}", r"\\w+", re.escape(literal)) for literal in literals]
    return re.compile("|".join(f"(?:{alternative})" for alternative in alternatives))


def _directives(block: list[str]) -> dict[str, str]:
    """Directive name -> its text (the lines after `name:` up to the next directive)."""
    body = [line for line in block[1:] if not _blank(line)]
    if not body:
        return {}
    indent = _indent(body[0])
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in body:
        match = DIRECTIVE.match(line)
        if _indent(line) == indent and match:
            current = sections.setdefault(match.group(1), [])
            current.append(line[match.end() :])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines) for name, lines in sections.items()}


def parse_rule_files(paths: Iterable[str | Path]) -> list[RuleText]:
    """Every rule of the given rule files, in file order."""
    files = [(str(path), Path(path).read_text(encoding="utf-8")) for path in paths]
    top_keys = _top_level_keys(text for _, text in files)
    rules: list[RuleText] = []
    for file, text in files:
        lines = DOCSTRING.sub('""', text).splitlines()
        for i, line in enumerate(lines):
            match = RULE.match(line)
            if not match:
                continue
            block = lines[i : _block_end(lines, i, len(match.group(1)))]
            directives = _directives(block)
            literals = [match.group(2)] if match.group(2) else _literals(directives.get("name", ""), not_after=("==", "!="))
            if not literals:
                continue
            body = "\n".join(block)
            keys = set(PARAM.findall(body))
            for name in _names_used(body, top_keys):
                keys |= top_keys[name]
            rules.append(
                RuleText(
                    name=" / ".join(literals),
                    pattern=_name_pattern(literals),
                    file=file,
                    outputs=tuple(_literals(directives.get("output", ""), not_after=("caption=", "category="))),
                    keys=tuple(sorted(keys)),
                )
            )
    return rules


@dataclass(frozen=True)
class Upstream:
    """The jobs a file is made from, by rule name: those whose outputs its job reads, and every one at any depth."""

    direct: frozenset[str]
    every: frozenset[str]


def file_upstream(
    snakefile: str | Path,
    paths: Iterable[str | Path],
    configfiles: Sequence[str | Path] = (),
    config_overrides: Mapping[str, Any] | None = None,
) -> dict[str, Upstream]:
    """Each of `paths` (as the workflow names it, relative to the Snakefile's folder) -> the rules of the jobs upstream
    of the job that writes it, from the workflow's DAG of all jobs under the run's `--configfile` files and `--config`
    overrides; an error for a path no job writes. The Snakefile is not resolved: a linked one (the smoke directory's)
    runs in the directory of the link, with its params.yaml."""
    from factlab.workflow.dvcyaml import load_workflow  # Snakemake's API: imported only where the DAG is needed

    snakefile = Path(snakefile).absolute()
    workflow = load_workflow(snakefile, [Path(path).absolute() for path in configfiles], config_overrides)
    dag = workflow.dag
    writer = {Path(str(output)).as_posix(): job for job in dag.jobs for output in job.output}
    found: dict[str, Upstream] = {}
    for path in paths:
        given = Path(path)
        wanted = (given.relative_to(snakefile.parent) if given.is_absolute() else given).as_posix()
        job = writer.get(wanted)
        if job is None:
            raise FactlabError(f"no job of {snakefile}'s DAG writes {wanted}")
        direct = {dependency.rule.name for dependency in dag.dependencies[job]}
        every = {upstream.rule.name for upstream in dag.bfs(dag.dependencies, job) if upstream is not job}
        found[given.as_posix()] = Upstream(direct=frozenset(direct), every=frozenset(every))
    return found


def keys_of_rules(names: Iterable[str], rules: Sequence[RuleText]) -> tuple[str, ...]:
    """The params.yaml keys the named rules read (sorted; a rule the rule files do not define, such as one of the
    Snakefile's, reads none)."""
    keys: set[str] = set()
    for name in names:
        rule = rule_named(rules, name)
        if rule is not None:
            keys.update(rule.keys)
    return tuple(sorted(keys))


def rule_named(rules: Iterable[RuleText], name: str) -> RuleText | None:
    """The rule called `name`: one that spells it exactly first (a loop rule's template `evaluate_{_table}_detection`
    also matches `evaluate_qa_detection`), else one whose name templates can build it."""
    rules = list(rules)
    exact = next((rule for rule in rules if name in rule.name.split(" / ")), None)
    return exact or next((rule for rule in rules if rule.pattern.fullmatch(name)), None)


def rule_writing(rules: Iterable[RuleText], path: str | Path) -> RuleText | None:
    """The rule whose output directive names `path` literally (as the rule files write it; `path` may be longer)."""
    wanted = Path(path).as_posix()
    return next(
        (rule for rule in rules for output in rule.outputs if wanted == output or wanted.endswith("/" + output)),
        None,
    )

"""`factlab paper pdf`: compile paper/main.tex into paper/main.pdf and check the build.

latexmk runs pdflatex until the cross-references settle (without latexmk, pdflatex runs until its log
stops asking for a rerun, at most 4 times), in a temporary folder, so that paper/ gets main.pdf and no
auxiliary files. Timestamps come from SOURCE_DATE_EPOCH (main.tex writes no /ID), so the same sources
give the same PDF bytes. The LaTeX log is kept (--latex-log); the command fails with one line on a
LaTeX error, an undefined or multiply defined reference or citation, a `??` in the PDF's text, or a numbered table
or figure whose caption is not in it (pdftotext, where poppler-utils is installed). Pages are counted by pdfinfo,
else read from the log.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factlab.errors import FactlabError
from factlab.io import atomic_path, write_text

INSTALL_HINT = "apt-get install --no-install-recommends latexmk texlive-latex-base texlive-latex-recommended poppler-utils"
SOURCE_DATE_EPOCH = "0"
MAX_PDFLATEX_RUNS = 4

UNDEFINED = re.compile(r"(?:LaTeX|Package natbib) Warning: (Reference|Citation) `([^']+)' on page (\d+)\s+undefined")
MULTIPLY_DEFINED = re.compile(r"LaTeX Warning: Label `([^']+)' multiply defined")
UNDEFINED_SUMMARY = "There were undefined references"
MULTIPLY_SUMMARY = "There were multiply-defined labels"
# "! message", or "file:line: message" under -file-line-error.
ERROR = re.compile(r"^(?:! .+|\S+\.(?:tex|sty|cls|cfg|def|clo|aux):\d+: .+)$", re.MULTILINE)
OUTPUT_WRITTEN = re.compile(r"Output written on .*?\((\d+) pages?,", re.DOTALL)
OVERFULL = re.compile(r"^Overfull \\[hv]box", re.MULTILINE)
WARNING = re.compile(r"^(?:LaTeX|Package \w+) Warning: .*$", re.MULTILINE)
FLOAT_TOO_LARGE = re.compile(r"LaTeX Warning: Float too large for page by ([\d.]+)pt on input line (\d+)")
RERUN = re.compile(r"Rerun to get|Label\(s\) may have changed|Rerun LaTeX")


@dataclass(frozen=True)
class LogCheck:
    undefined: tuple[str, ...]  # "tab:x (page 2)", citations as "citation k (page 1)"
    multiply_defined: tuple[str, ...]
    errors: tuple[str, ...]
    warnings: tuple[str, ...]  # every LaTeX/package warning line, for the summary
    overfull_boxes: int
    pages: int | None  # from "Output written on … (N pages"
    undefined_summary: bool  # LaTeX's closing "There were undefined references"
    floats_too_large: tuple[str, ...] = ()  # "116.7pt (input line 100)": a float taller than the page, its bottom cut off

    def problems(self) -> list[str]:
        found = []
        if self.errors:
            found.append(f"LaTeX error: {self.errors[0]}")
        if self.undefined:
            found.append(f"{len(self.undefined)} undefined reference(s): {', '.join(self.undefined[:5])}")
        elif self.undefined_summary:
            found.append("LaTeX reports undefined references")
        if self.multiply_defined:
            found.append(f"multiply defined label(s): {', '.join(self.multiply_defined[:5])}")
        if self.floats_too_large:
            found.append(f"a float is taller than the page (cut off) by {', '.join(self.floats_too_large[:5])}")
        return found


def _unwrap(text: str) -> str:
    """TeX breaks log lines at max_print_line (79): join the pieces of a broken warning."""
    return re.sub(r"(?m)^(.{79})\n", r"\1", text)


def check_log(text: str) -> LogCheck:
    """What a pdflatex log says about the build (the last run's log)."""
    joined = _unwrap(text)  # for the messages that name a label; line-anchored ones read the lines as they are
    undefined = []
    for kind, key, page in UNDEFINED.findall(joined):
        entry = f"{key} (page {page})" if kind == "Reference" else f"citation {key} (page {page})"
        if entry not in undefined:
            undefined.append(entry)
    pages = OUTPUT_WRITTEN.search(joined)
    return LogCheck(
        undefined=tuple(undefined),
        multiply_defined=tuple(dict.fromkeys(MULTIPLY_DEFINED.findall(joined))),
        errors=tuple(line.strip() for line in ERROR.findall(text)),
        warnings=tuple(dict.fromkeys(line.strip() for line in WARNING.findall(text))),
        overfull_boxes=len(OVERFULL.findall(text)),
        pages=int(pages.group(1)) if pages else None,
        undefined_summary=UNDEFINED_SUMMARY in joined,
        floats_too_large=tuple(f"{excess}pt (input line {line})" for excess, line in FLOAT_TOO_LARGE.findall(joined)),
    )


def count_pages(pdf: str | Path) -> int:
    """Pages of a PDF (pdfinfo, from poppler-utils)."""
    if shutil.which("pdfinfo") is None:
        raise FactlabError(f"pdfinfo is not installed (poppler-utils); cannot count the pages of {pdf}")
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=False)
    match = re.search(r"^Pages:\s+(\d+)", info.stdout, re.MULTILINE)
    if info.returncode != 0 or match is None:
        raise FactlabError(f"pdfinfo cannot read {pdf}: {info.stderr.strip() or info.stdout.strip()}")
    return int(match.group(1))


def pdf_text(pdf: str | Path) -> str | None:
    """The PDF's text (pdftotext), None where poppler-utils is not installed."""
    if shutil.which("pdftotext") is None:
        return None
    result = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=False)
    return result.stdout if result.returncode == 0 else None


CAPTION_ENTRY = re.compile(r"\\@writefile\{(lot|lof)\}\{\\contentsline \{(table|figure)\}\{\\numberline \{(\d+)\}")


def missing_captions(aux: str, text: str) -> list[str]:
    """The floats LaTeX numbered (the captions the .aux lists for the lists of tables and figures) whose caption,
    "Table 3:" or "Figure 2:", is not in the PDF's text: e.g. a float taller than the page, its caption cut off."""
    missing = []
    for _, kind, number in CAPTION_ENTRY.findall(aux):
        label = f"{kind.capitalize()} {number}:"
        if not re.search(rf"\b{label}", text):
            missing.append(label.rstrip(":"))
    return missing


def engine() -> str | None:
    """latexmk (with pdflatex), else pdflatex alone, else None."""
    if shutil.which("pdflatex") is None:
        return None
    return "latexmk" if shutil.which("latexmk") else "pdflatex"


def _environment() -> dict[str, str]:
    return {
        **os.environ,
        "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH,
        "FORCE_SOURCE_DATE": "1",
        "max_print_line": "10000",  # one log line per message
    }


def compile_tex(tex: str | Path, build_dir: str | Path) -> tuple[Path, Path]:
    """Compile `tex` (run from its folder, so relative \\input and graphics paths hold) into `build_dir`;
    the PDF and the log. A failed run raises with the log's first error."""
    tex, build_dir = Path(tex).resolve(), Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)  # pdflatex does not make it (latexmk does)
    found = engine()
    if found is None:
        raise FactlabError(f"no TeX engine (pdflatex) to compile {tex}: {INSTALL_HINT}")
    pdflatex = ["-interaction=nonstopmode", "-halt-on-error", "-file-line-error"]
    log = build_dir / f"{tex.stem}.log"
    env = _environment()
    if found == "latexmk":
        runs = [["latexmk", "-norc", "-pdf", *pdflatex, f"-outdir={build_dir}", tex.name]]
    else:
        runs = [["pdflatex", *pdflatex, f"-output-directory={build_dir}", tex.name]] * MAX_PDFLATEX_RUNS
    for i, command in enumerate(runs):
        result = subprocess.run(command, cwd=tex.parent, env=env, stdin=subprocess.DEVNULL, check=False)
        if result.returncode != 0:
            errors = check_log(log.read_text(errors="replace")).errors if log.exists() else ()
            detail = errors[0] if errors else f"{command[0]} exited with {result.returncode}"
            raise FactlabError(f"{tex.name} does not compile: {detail}")
        if found == "pdflatex" and i > 0 and not RERUN.search(log.read_text(errors="replace")):
            break
    return build_dir / f"{tex.stem}.pdf", log


def build_pdf(tex: str | Path, out: str | Path, latex_log: str | Path) -> tuple[int, LogCheck]:
    """Compile `tex` into `out`, keep its LaTeX log, and fail on what `LogCheck.problems` finds or on a
    `??` in the text. The pages and the log check."""
    with tempfile.TemporaryDirectory(prefix="factlab-latex-") as build:
        try:
            pdf, log = compile_tex(tex, build)
        except FactlabError as error:
            failed_log = Path(build) / f"{Path(tex).stem}.log"
            if failed_log.exists():
                write_text(failed_log.read_text(errors="replace"), latex_log)
            raise FactlabError(f"{error}; LaTeX log: {latex_log}") from error
        log_text = log.read_text(errors="replace")
        write_text(log_text, latex_log)
        check = check_log(log_text)
        problems = check.problems()
        text = pdf_text(pdf)
        if text is not None and "??" in text:
            problems.append("'??' in the PDF's text (an unresolved reference)")
        aux = log.with_suffix(".aux")
        lost = missing_captions(aux.read_text(errors="replace"), text) if text is not None and aux.exists() else []
        if lost:
            problems.append(f"captions numbered but not in the PDF's text: {', '.join(lost)}")
        if problems:
            raise FactlabError(f"{out}: {'; '.join(problems)}; LaTeX log: {latex_log}")
        pages = count_pages(pdf) if shutil.which("pdfinfo") else check.pages
        if pages is None:
            raise FactlabError(f"{out}: no page count (no pdfinfo, and the log names none); LaTeX log: {latex_log}")
        with atomic_path(out) as tmp:
            shutil.copyfile(pdf, tmp)
    return pages, check


def register(commands: Any) -> None:
    parser = commands.add_parser("pdf", help="compile paper/main.tex into paper/main.pdf and check references")
    parser.add_argument("--tex", required=True, help="paper/main.tex")
    parser.add_argument("--out", required=True, help="paper/main.pdf")
    parser.add_argument("--latex-log", required=True, help="where the LaTeX log is kept")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    pages, check = build_pdf(args.tex, args.out, args.latex_log)
    print(f"{args.out}: {pages} pages, {check.overfull_boxes} overfull boxes, {len(check.warnings)} warnings")
    for warning in check.warnings:
        print(f"  {warning}")

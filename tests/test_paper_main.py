"""paper/main.tex shows every generated table and figure once, with captions from captions.py; paper/README.md
maps each to its rule and params.yaml keys; the PDF build fails on an undefined reference, checked on logs
and PDFs that a real TeX engine produced (skipped without one unless FACTLAB_REQUIRE_TEX is set)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from factlab.cli import main as factlab_main
from factlab.errors import FactlabError
from factlab.paper import captions
from factlab.paper.latex_command import build_pdf, check_log, compile_tex, count_pages, missing_captions, pdf_text
from factlab.paper.main_tex_command import FURTHER, SECTIONS, collect_floats, render_main
from factlab.paper.provenance import file_upstream, keys_of_rules, parse_rule_files, rule_named, rule_writing
from factlab.paper.tables import to_latex

ROOT = Path(__file__).resolve().parents[1]
HAVE_TEX = shutil.which("pdflatex") is not None and shutil.which("pdfinfo") is not None
requires_tex = pytest.mark.skipif(
    not HAVE_TEX and not os.environ.get("FACTLAB_REQUIRE_TEX"),
    reason="no TeX engine (pdflatex) and pdfinfo; set FACTLAB_REQUIRE_TEX=1 to make this a failure",
)

RULES = """
SUBSETS = param("metaeval.frank.subsets")
THING_SCORES = [f"results/score/{name}.parquet" for name in ("x", "y")]


rule score_things:
    output:
        "results/score/{name}.parquet",
    params:
        model=param("score.alignscore.model"),


rule correlate_things:
    input:
        THING_SCORES,
    output:
        all="results/metaeval/things.csv",
    params:
        variant=param("metaeval.frank.partial_variant"),


for _kind in ("a", "b"):

    rule:
        name:
            "count_plain" if _kind == "a" else f"count_{_kind}_things"
        output:
            f"results/metaeval/{_kind}.csv",
        params:
            bins=param("metaeval.ece_bins"),


rule tabulate_datasets:
    input:
        things=rules.correlate_things.output.all,
        counts=rules.count_b_things.output[0],
    output:
        md=report("paper/tables/datasets.md", caption="../report/x.rst", category="datasets"),
        tex="paper/tables/datasets.tex",
    params:
        subsets=SUBSETS,
    shell:
        "factlab paper datasets-table --subsets {params.subsets} > {log} 2>&1"


rule tabulate_new:
    output:
        md="paper/tables/new_table.md",
        tex="paper/tables/new_table.tex",


rule plot_frank_williams:
    input:
        rules.correlate_things.output.all,
    output:
        "paper/figures/frank_williams.png",
"""


# The workflow around RULES: `param` stands in for common.smk's accessor; the default target asks for the paper files.
SNAKEFILE = """
def param(key):
    return key


include: "rules.smk"


rule all:
    default_target: True
    input:
        "paper/tables/datasets.tex",
        "paper/tables/new_table.tex",
        "paper/figures/frank_williams.png",
"""


@pytest.fixture
def paper(tmp_path, monkeypatch) -> Path:
    """A working directory with paper/tables (a known and an unknown stem), paper/figures, a rule file and the
    Snakefile that includes it."""
    monkeypatch.chdir(tmp_path)
    frame = pd.DataFrame({"benchmark": ["frank", "qags_xsum"], "rows": [2246, 239]})
    for stem, label in (("datasets", "tab:datasets"), ("new_table", "tab:new")):
        path = tmp_path / "paper" / "tables" / f"{stem}.tex"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(to_latex(frame, f"Caption of {stem.replace('_', ' ')}.", label))
    figure = tmp_path / "paper" / "figures" / "frank_williams.png"
    figure.parent.mkdir(parents=True)
    Image.new("RGB", (40, 30), "steelblue").save(figure)
    (tmp_path / "rules.smk").write_text(RULES)
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    return tmp_path


TABLES = ["paper/tables/datasets.tex", "paper/tables/new_table.tex"]
FIGURES = ["paper/figures/frank_williams.png"]


def test_main_tex_shows_every_table_and_figure_once(paper):
    text = render_main(collect_floats(TABLES, FIGURES, Path("paper")))
    assert text.count("\\input{tables/datasets.tex}") == 1 and text.count("\\input{tables/new_table.tex}") == 1
    assert text.count("\\includegraphics") == 1 and "{figures/frank_williams.png}" in text
    # Each float is referenced from the text of its section; an unknown stem gets the closing section.
    for label in ("tab:datasets", "tab:new", "fig:frank-williams"):
        assert f"\\ref{{{label}}}" in text
    sections = re.findall(r"\\section\{([^}]*)\}", text)
    assert sections == [section.title for section in SECTIONS] + [FURTHER.title]
    assert text.index("\\section{Further results}") < text.index("\\input{tables/new_table.tex}")
    assert text.index("\\section{FRANK correlations}") < text.index("figures/frank_williams.png")


def test_labels_are_unique_and_captions_come_from_captions_py(paper):
    text = render_main(collect_floats(TABLES, FIGURES, Path("paper")))
    inputs = "".join((paper / "paper" / name).read_text() for name in re.findall(r"\\input\{([^}]*)\}", text))
    labels = re.findall(r"\\label\{([^}]*)\}", text + inputs)
    assert len(labels) == len(set(labels)) == len(SECTIONS) + 1 + 3
    assert f"\\caption{{{captions.FIGURES['frank_williams']}}}" in text
    # A table's caption lives in its .tex (written by tables.to_latex from captions.py): not repeated.
    assert "Caption of datasets." not in text and text.count("\\caption") == 1


def test_a_figure_without_a_caption_or_a_doubled_label_is_an_error(paper):
    orphan = paper / "paper" / "figures" / "orphan.png"
    shutil.copy(paper / FIGURES[0], orphan)
    with pytest.raises(FactlabError, match="captions.FIGURES"):
        collect_floats([], [orphan], Path("paper"))
    twin = paper / "paper" / "tables" / "twin.tex"
    twin.write_text((paper / TABLES[0]).read_text())
    with pytest.raises(FactlabError, match="tab:datasets"):
        collect_floats([TABLES[0], twin], [], Path("paper"))
    bare = paper / "paper" / "tables" / "bare.tex"
    bare.write_text("\\begin{tabular}{l}\nx\\\\\n\\end{tabular}\n")
    with pytest.raises(FactlabError, match="table environment"):
        collect_floats([bare], [], Path("paper"))


def test_rules_and_keys_are_read_from_the_rule_files(paper):
    rules = parse_rule_files([paper / "rules.smk"])
    table = rule_writing(rules, "paper/tables/datasets.tex")
    assert table.name == "tabulate_datasets" and table.keys == ("metaeval.frank.subsets",)
    assert "paper/tables/datasets.md" in table.outputs and "../report/x.rst" not in table.outputs
    loop = next(rule for rule in rules if rule.pattern.fullmatch("count_b_things"))
    assert loop.name == "count_plain / count_{_kind}_things" and loop.keys == ("metaeval.ece_bins",)


def test_upstream_jobs_come_from_the_dag_at_any_depth(paper):
    # correlate_things reads score_things' outputs through a list of paths, not rules.score_things: only the DAG
    # knows it, and tabulate_datasets is two rules below it.
    found = file_upstream(paper / "Snakefile", ["paper/tables/datasets.tex", "paper/figures/frank_williams.png"])
    table = found["paper/tables/datasets.tex"]
    assert table.direct == {"correlate_things", "count_b_things"}
    assert table.every == {"correlate_things", "count_b_things", "score_things"}
    assert found["paper/figures/frank_williams.png"].every == {"correlate_things", "score_things"}
    rules = parse_rule_files([paper / "rules.smk"])
    assert keys_of_rules(table.every, rules) == (
        "metaeval.ece_bins",
        "metaeval.frank.partial_variant",
        "score.alignscore.model",
    )
    with pytest.raises(FactlabError, match="no job .* writes paper/tables/absent.tex"):
        file_upstream(paper / "Snakefile", ["paper/tables/absent.tex"])


def test_a_rule_spelt_exactly_wins_over_a_loop_rule_s_template():
    # metaeval.smk's loop rule evaluate_{_table}_detection can build the name evaluate_qa_detection, a rule of its own.
    rules = parse_rule_files([ROOT / "workflow" / "rules" / "metaeval.smk"])
    assert rule_named(rules, "evaluate_qa_detection").name == "evaluate_qa_detection"
    assert rule_named(rules, "evaluate_true_detection").name.startswith("evaluate_detection / ")


def test_command_writes_main_tex_and_readme(paper):
    assert (
        factlab_main(
            ["paper", "main-tex", "--tables", *TABLES, "--figures", *FIGURES, "--rule-files", "rules.smk"]
            + ["--snakefile", "Snakefile", "--out-tex", "paper/main.tex", "--out-readme", "paper/README.md"]
        )
        == 0
    )
    assert "\\input{tables/new_table.tex}" in (paper / "paper" / "main.tex").read_text()
    readme = (paper / "paper" / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `tables/datasets.tex`")).split(" | ")
    assert "`tables/datasets.md`" in row[0] and "`tabulate_datasets` (rules.smk)" == row[3]
    assert row[4] == "`metaeval.frank.subsets`"  # its own keys
    assert row[5] == "`correlate_things` (rules.smk), `count_b_things` (rules.smk)"  # the rules it reads from
    # Every key upstream, two rules up included: score_things' model.
    assert row[6] == "`metaeval.ece_bins`, `metaeval.frank.partial_variant`, `score.alignscore.model` |"
    figure_row = next(line for line in readme.splitlines() if "frank_williams.png" in line)
    assert "`plot_frank_williams`" in figure_row and "`fig:frank-williams`" in figure_row
    assert figure_row.endswith("| `correlate_things` (rules.smk) | `metaeval.frank.partial_variant`, `score.alignscore.model` |")


def test_keys_upstream_follow_the_run_s_configfiles_and_a_linked_snakefile_s_directory(paper, tmp_path):
    # A rule that exists only when a key is set: the DAG built with the override has it, the plain one has not.
    (paper / "rules.smk").write_text(
        RULES.replace('THING_SCORES = [f"results/score/{name}.parquet" for name in ("x", "y")]', EXTRA_SCORES)
    )
    (paper / "Snakefile").write_text(SNAKEFILE.replace("def param(key):\n    return key", PARAM_FROM_CONFIG))
    (paper / "extra.yaml").write_text("extra: true\n")
    table = "paper/tables/datasets.tex"
    assert "score_extra_things" not in file_upstream(paper / "Snakefile", [table])[table].every
    assert "score_extra_things" in file_upstream(paper / "Snakefile", [table], [paper / "extra.yaml"])[table].every
    # --config values, over params.yaml's and over a configfile's.
    assert "score_extra_things" in file_upstream(paper / "Snakefile", [table], [], {"extra": True})[table].every
    extra_off = file_upstream(paper / "Snakefile", [table], [paper / "extra.yaml"], {"extra": False})
    assert "score_extra_things" not in extra_off[table].every
    # The smoke directory's layout: the Snakefile and rule file linked in, a params.yaml of its own. Its DAG is that
    # of its own configuration, not of the directory the links point to.
    linked = tmp_path / "linked"
    linked.mkdir()
    for name in ("Snakefile", "rules.smk"):
        (linked / name).symlink_to(paper / name)
    (linked / "params.yaml").write_text("extra: true\n")
    (paper / "Snakefile").write_text((paper / "Snakefile").read_text().replace("def param", CONFIGFILE + "def param"))
    (paper / "params.yaml").write_text("extra: false\n")
    assert "score_extra_things" not in file_upstream(paper / "Snakefile", [table])[table].every
    assert "score_extra_things" in file_upstream(linked / "Snakefile", [table])[table].every
    # The command reads its --configfiles.
    command = ["paper", "main-tex", "--tables", *TABLES, "--figures", *FIGURES, "--rule-files", "rules.smk"]
    outputs = ["--out-tex", "paper/main.tex", "--out-readme", "paper/README.md"]
    for configured, has_extra in (
        ([], False),
        (["--configfiles", "extra.yaml"], True),
        (["--config-overrides", '{"extra": true}'], True),
        (["--configfiles", "extra.yaml", "--config-overrides", '{"extra": false}'], False),
    ):
        assert factlab_main([*command, "--snakefile", "Snakefile", *configured, *outputs]) == 0
        readme = (paper / "paper" / "README.md").read_text()
        row = next(line for line in readme.splitlines() if line.startswith("| `tables/datasets.tex`"))
        assert ("`score.extra.model`" in row) == has_extra


CONFIGFILE = 'configfile: "params.yaml"\n\n\n'
EXTRA_SCORES = """THING_SCORES = [f"results/score/{name}.parquet" for name in ("x", "y")]
if config.get("extra"):
    THING_SCORES.append("results/extra/z.parquet")

    rule score_extra_things:
        output:
            "results/extra/{name}.parquet",
        params:
            model=param("score.extra.model"),
"""
PARAM_FROM_CONFIG = "def param(key):\n    return config.get(key, key)"


def test_every_committed_table_and_figure_has_a_rule_and_a_caption():
    rules = parse_rule_files(sorted((ROOT / "workflow" / "rules").glob("*.smk")))
    tables = sorted((ROOT / "paper" / "tables").glob("*.tex"))
    figures = sorted(path for path in (ROOT / "paper" / "figures").glob("*") if path.suffix in (".png", ".pdf"))
    assert tables and figures
    for path in tables + figures:
        assert rule_writing(rules, path.relative_to(ROOT)) is not None, path
    floats = collect_floats(tables, figures, ROOT / "paper")  # raises on a missing caption or a doubled label
    assert len(floats) == len(tables) + len(figures)


def test_log_check_joins_lines_tex_broke():
    warning = "LaTeX Warning: Reference `tab:a-rather-long-label-name-that-makes-the-warning-wrap' on page 3 undefined."
    log = warning[:79] + "\n" + warning[79:] + "\n"  # cut at column 79, as TeX cuts log lines
    assert check_log(log).undefined == ("tab:a-rather-long-label-name-that-makes-the-warning-wrap (page 3)",)
    clean = check_log("Output written on main.pdf (12 pages, 1000 bytes).\n")
    assert clean.problems() == [] and clean.pages == 12


TINY = r"""\documentclass{article}
\begin{document}
Section~\ref{sec:there} is defined%s.
\section{There}\label{sec:there}
\newpage
Second page.
\end{document}
"""


@requires_tex
def test_undefined_reference_is_found_in_a_real_log(tmp_path):
    tex = tmp_path / "tiny.tex"
    tex.write_text(TINY % r", Table~\ref{tab:missing} is not")
    pdf, log = compile_tex(tex, tmp_path / "build")
    check = check_log(log.read_text())
    assert check.undefined == ("tab:missing (page 1)",) and check.undefined_summary
    assert check.problems() and pdf.is_file()
    with pytest.raises(FactlabError) as error:
        build_pdf(tex, tmp_path / "tiny.pdf", tmp_path / "tiny.log")
    message = str(error.value)
    assert "\n" not in message and "1 undefined reference(s): tab:missing (page 1)" in message
    assert not (tmp_path / "tiny.pdf").exists() and (tmp_path / "tiny.log").is_file()


@requires_tex
def test_pages_of_a_compiled_pdf(tmp_path):
    tex = tmp_path / "tiny.tex"
    tex.write_text(TINY % "")
    pages, check = build_pdf(tex, tmp_path / "out" / "tiny.pdf", tmp_path / "tiny.log")
    assert pages == 2 == count_pages(tmp_path / "out" / "tiny.pdf") == check.pages
    assert check.problems() == [] and not check.undefined_summary
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out", "tiny.log", "tiny.tex"]  # no aux files


@requires_tex
def test_generated_main_tex_compiles_with_every_reference_resolved(paper):
    tex = paper / "paper" / "main.tex"
    tex.write_text(render_main(collect_floats(TABLES, FIGURES, Path("paper"))))
    pages, check = build_pdf(tex, paper / "paper" / "main.pdf", paper / "main.log")
    assert pages >= 1 and check.problems() == []
    assert count_pages(paper / "paper" / "main.pdf") == pages


def test_a_float_taller_than_the_page_is_a_problem():
    check = check_log("LaTeX Warning: Float too large for page by 116.70357pt on input line 100.\n")
    assert check.floats_too_large == ("116.70357pt (input line 100)",)
    assert check.problems() == ["a float is taller than the page (cut off) by 116.70357pt (input line 100)"]


@requires_tex
def test_a_table_longer_than_the_page_is_scaled_to_fit(paper):
    """The detection table had 87 rows: unscaled, its float ran 117pt past the page and lost its last rows. With the
    sampled rows it has 189, under its own caption of some 13 lines, which ran 22.5pt past the page when tables were
    scaled to 75% of the text height."""
    rows = pd.DataFrame({"benchmark": [f"benchmark {i}" for i in range(190)], "rows": range(190)})
    (paper / "paper" / "tables" / "datasets.tex").write_text(to_latex(rows, captions.DETECTION, "tab:datasets"))
    tex = paper / "paper" / "main.tex"
    tex.write_text(render_main(collect_floats(TABLES, FIGURES, Path("paper"))))
    pages, check = build_pdf(tex, paper / "paper" / "main.pdf", paper / "main.log")
    assert check.problems() == [] and check.floats_too_large == ()
    text = pdf_text(paper / "paper" / "main.pdf")
    assert text is not None and "benchmark 189" in text  # the last row is on the page (pdftotext: poppler-utils, as pdfinfo)


@requires_tex
def test_a_latex_error_fails_with_its_first_line(tmp_path):
    tex = tmp_path / "broken.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\n\\nosuchmacro\n\\end{document}\n")
    with pytest.raises(FactlabError, match=r"broken.tex does not compile: \./broken.tex:3: Undefined control sequence"):
        build_pdf(tex, tmp_path / "broken.pdf", tmp_path / "broken.log")
    assert not (tmp_path / "broken.pdf").exists() and "Undefined control sequence" in (tmp_path / "broken.log").read_text()


FLOATS = r"""\documentclass{article}
\usepackage[font=small,labelfont=bf]{caption}
\begin{document}
See Table~\ref{tab:a} and Figure~\ref{fig:a}.
\begin{table}\centering\caption{A table.}\label{tab:a}\begin{tabular}{c}x\\\end{tabular}\end{table}
\begin{figure}\centering\rule{1cm}{1cm}\caption{A figure.}\label{fig:a}\end{figure}
\end{document}
"""


@requires_tex
def test_every_numbered_float_s_caption_must_be_in_the_pdf_text(tmp_path):
    tex = tmp_path / "floats.tex"
    tex.write_text(FLOATS)
    pages, check = build_pdf(tex, tmp_path / "floats.pdf", tmp_path / "floats.log")
    assert pages == 1 and check.problems() == []
    pdf, log = compile_tex(tex, tmp_path / "build")
    aux, text = log.with_suffix(".aux").read_text(), pdf_text(pdf)
    assert text is not None and missing_captions(aux, text) == []
    # a float LaTeX numbered but whose caption never reached a page is named
    assert missing_captions(aux, text.replace("Figure 1:", "")) == ["Figure 1"]
    assert missing_captions(aux, text.replace("Table 1:", "Table 2:")) == ["Table 1"]

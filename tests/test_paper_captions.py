"""Captions live in one place, src/factlab/paper/captions.py: the report's workflow/report/*.rst are generated from
REPORT_CAPTIONS (`python -m factlab.paper.captions`), so the committed files must be what it writes, and every
caption a rule file names must have a stem there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docutils.core import publish_doctree

from factlab.paper import captions
from factlab.paper.captions import REPORT_CAPTIONS, main, report_files, report_rst, stale_files, to_rst

ROOT = Path(__file__).resolve().parents[1]
REPORT_DIR = ROOT / "workflow" / "report"
CAPTION_REFERENCE = re.compile(r"""caption\s*=\s*["']\.\./report/([^"'/]+)\.rst["']""")


@pytest.mark.parametrize(
    ("latex", "rst"),
    [
        ("ROC AUC $\\times$ 100 with a 95\\% CI", "ROC AUC × 100 with a 95% CI"),
        ("Fleiss' $\\kappa$ and Krippendorff's $\\alpha$", "Fleiss' κ and Krippendorff's α"),
        ("token IOU $\\geq$ 0.3", "token IOU ≥ 0.3"),
        ("the $r_{23}$ of the Williams tests", "the r₂₃ of the Williams tests"),
        ("$r_{ij}$ and $x^{2}$ and $p < 0.05$", "r_ij and x² and p < 0.05"),
        ("\\emph{one} or \\textit{two}, \\textbf{three}", "*one* or *two*, **three**"),
        ("group premise \\texttt{whole}", "group premise ``whole``"),
        ("params.yaml \\texttt{metaeval.ece\\_bins}", "params.yaml ``metaeval.ece_bins``"),
        ("ECE is undefined (--) where", "ECE is undefined (--) where"),
        ("policy (flag\\_all: every token)", "policy (flag_all: every token)"),
        ("~see ``this''", " see “this”"),
        # What reStructuredText would read as markup is escaped: emphasis, a reference (word_), a substitution.
        ("* marks p < 0.05", "\\* marks p < 0.05"),
        ("a word\\_ and a|b", "a word\\_ and a\\|b"),
        # Markup next to a letter is set apart by an escaped space, which reStructuredText removes.
        ("\\texttt{flag}s", "``flag``\\ s"),
        ("first\n\n  second   paragraph\n", "first\n\nsecond paragraph"),
    ],
)
def test_to_rst(latex, rst):
    assert to_rst(latex) == rst


def test_to_rst_of_a_paper_caption():
    assert to_rst(captions.TRUE_DETECTION) == (
        "ROC AUC × 100 of factlab's scorers on the TRUE sets (positive = consistent), with 95% document-bootstrap "
        "intervals, beside the metrics whose per-example scores SCALE released (columns published\\_\\*), entered "
        "as a user's scores are. On BEGIN and Q2, whose sources are a few dozen words, AlignScore and SCALE read the "
        "same pairs with the same model, so their scores coincide."
    )
    assert to_rst(captions.frank_baselines("ranked")).startswith(
        "Partial correlation of FRANK's baseline metrics with the human Factuality score, controlling for the "
        "summarisation system (variant ``ranked``: Spearman on ranks"
    )
    assert to_rst(captions.frank_baselines("ranked")).endswith("\\* marks p < 0.05.")


def test_report_captions_reuse_the_paper_wording():
    assert REPORT_CAPTIONS["datasets_table"] == captions.DATASETS
    assert REPORT_CAPTIONS["frank_williams"].startswith(captions.FIGURES["frank_williams"])
    assert set(captions.FIGURES) <= set(REPORT_CAPTIONS)  # every figure of the paper has a report caption
    # Where the paper prints a value, the report names the params.yaml key that sets it.
    assert "metaeval.ece\\_bins" in REPORT_CAPTIONS["true_published_table"]
    assert "qasem.evaluate.iou\\_threshold" in REPORT_CAPTIONS["qasem_parser_table"]
    assert "metaeval.frank.partial\\_variant" in REPORT_CAPTIONS["frank_baselines_table"]
    assert "aligner.mixture.leakage\\_ngram" in REPORT_CAPTIONS["training_mixture_table"]
    assert "score.scale.retrieval.branches" in REPORT_CAPTIONS["retrieval_table"]


@pytest.mark.parametrize("stem", sorted(REPORT_CAPTIONS))
def test_captions_escape_tex_s_comment_sign(stem):
    # an unescaped % makes TeX drop the rest of the line: the caption's closing brace with it
    assert re.search(r"(?<!\\)%", REPORT_CAPTIONS[stem]) is None


@pytest.mark.parametrize("stem", sorted(REPORT_CAPTIONS))
def test_report_captions_are_valid_rst(stem):
    text = report_rst(stem)
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert max(len(line) for line in text.splitlines()) <= captions.WIDTH
    # halt_level 2: a warning (unbalanced markup, a reference to nowhere) raises.
    tree = publish_doctree(text, settings_overrides={"halt_level": 2, "report_level": 5})
    assert {type(node).__name__ for node in tree.children} == {"paragraph"}  # no stray list or block
    assert "\\" not in tree.astext() and "$" not in tree.astext()


def test_committed_report_captions_are_generated():
    expected = report_files()
    committed = {path.name: path.read_text() for path in REPORT_DIR.glob("*.rst")}
    assert set(committed) == set(expected), "run `python -m factlab.paper.captions`"
    for name, text in expected.items():
        assert committed[name] == text, f"workflow/report/{name} is stale: run `python -m factlab.paper.captions`"
    assert stale_files(REPORT_DIR) == []


def test_every_caption_a_rule_names_has_a_stem():
    referenced = {
        (path.name, stem)
        for path in sorted((ROOT / "workflow" / "rules").glob("*.smk"))
        for stem in CAPTION_REFERENCE.findall(path.read_text())
    }
    assert {"qasem_parser_scores", "frank_williams"} <= {stem for _, stem in referenced}  # the regex reads them
    missing = sorted((rule_file, stem) for rule_file, stem in referenced if stem not in REPORT_CAPTIONS)
    assert not missing, f"captions named in workflow/rules but not in captions.REPORT_CAPTIONS: {missing}"


def test_main_writes_and_checks(tmp_path, capsys):
    assert main(["--dir", str(tmp_path), "--check"]) == 1  # nothing written yet: all missing
    assert main(["--dir", str(tmp_path)]) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(f"{stem}.rst" for stem in REPORT_CAPTIONS)
    assert main(["--dir", str(tmp_path), "--check"]) == 0
    capsys.readouterr()

    edited = tmp_path / "agreement_table.rst"
    edited.write_text(edited.read_text().replace("Agreement", "Concordance"))
    (tmp_path / "hand_written.rst").write_text("A caption outside captions.py.\n")
    assert main(["--dir", str(tmp_path), "--check"]) == 1
    errors = capsys.readouterr().err
    assert f"{edited} is stale" in errors
    assert "hand_written.rst has no stem in REPORT_CAPTIONS" in errors
    assert "datasets_table.rst" not in errors

    assert main(["--dir", str(tmp_path)]) == 0  # rewrites the edited one, leaves (and names) the stray one
    assert edited.read_text() == report_rst("agreement_table")
    assert stale_files(tmp_path) == [tmp_path / "hand_written.rst"]


def test_every_paper_table_and_figure_is_in_the_snakemake_report():
    # `snakemake --report` shows what is wrapped in report(): every Markdown table and every figure of paper/.
    text = (ROOT / "workflow" / "rules" / "paper.smk").read_text()
    parts = re.findall(r'"(paper/(?:tables/[\w.]+\.md|figures/[\w.]+\.png))"', text)
    wrapped = re.findall(r'report\(\s*"(paper/(?:tables/[\w.]+\.md|figures/[\w.]+\.png))"', text)
    assert len(parts) >= 18
    assert sorted(parts) == sorted(wrapped), f"outside report(): {sorted(set(parts) - set(wrapped))}"

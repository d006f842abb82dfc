"""`factlab report localise`: the payload against hand-worked values, escaping, and the page in headless Chromium.

The browser tests need Debian's `chromium` (or FACTLAB_CHROMIUM=path). Without it they skip, unless
FACTLAB_REQUIRE_BROWSER is set (CI), where a missing browser fails. Screenshots and the scale
measurements go to artifacts/report_localise/ (FACTLAB_ARTIFACTS overrides artifacts/).
"""

from __future__ import annotations

import html.parser
import json
import math
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from factlab.cli import main
from factlab.errors import DataError, FactlabError
from factlab.report.assets import PAGE_CSS, PAGE_JS
from factlab.report.localise_command import (
    LocaliseSettings,
    build_payload,
    checker_thresholds,
    disagrees,
    flatten_metrics,
    read_corrections,
    read_gold,
    read_metrics,
    render_html,
    script_json,
    sentence_evidence,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "report"
DATA = FIXTURES / "true_frank_data.parquet"
SCORES = FIXTURES / "true_frank_alignscore.parquet"
AUC = FIXTURES / "true_auc.csv"
ARTIFACTS = Path(os.environ.get("FACTLAB_ARTIFACTS", ROOT / "artifacts")) / "report_localise"
SETTINGS = LocaliseSettings(threshold=0.5, page_size=50)
EVIL = '</script><script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'"><!-- &amp; \u2028'


# --- hand-worked payload ------------------------------------------------------------------------------------------

SOURCE_A = "Cats purr loudly. Dogs bark at night."  # 37 characters
SOURCE_B = "Birds sing."


def sentence(start: int, end: int, support: float, chunk: tuple[int, int]) -> dict:
    return {"sentence_index": 0, "start": start, "end": end, "support": support, "best_chunk": 0,
            "chunk_start": chunk[0], "chunk_end": chunk[1], "premise_pieces_cut": 0}  # fmt: skip


def hand_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    data = pd.DataFrame(
        {
            "example_id": ["b", "a", "c", "d"],
            "system": ["s1", "s2", "s1", "s2"],
            "source": [SOURCE_A, SOURCE_A, SOURCE_B, SOURCE_B],
            "output": ["Cats purr. Dogs bark.", "Cats bark.", "Birds fly.", "Birds sing."],
            "label": pd.array([0, 0, 1, 1], dtype="Int8"),
        }
    )
    scores = pd.DataFrame(
        {
            "example_id": ["a", "b", "c"],
            "score": [0.3, 0.55, math.nan],
            "sentences": [
                [sentence(0, 10, 0.3, (0, 17))],
                [sentence(11, 21, 0.2, (18, 37)), sentence(0, 10, 0.9, (0, 17))],  # stored out of order
                [],
            ],
        }
    )
    return data, scores


def test_payload_matches_hand_worked_values() -> None:
    data, scores = hand_tables()
    payload = build_payload(data, scores, benchmark="toy", scorer="alignscore", settings=SETTINGS, metrics=[("roc_auc", 0.8)])
    assert [example["id"] for example in payload["examples"]] == ["a", "b", "c"]  # scored only, by example_id
    assert payload["sources"] == [SOURCE_A, SOURCE_B]  # each source once
    a, b, c = payload["examples"]
    assert (a["source"], b["source"], c["source"]) == (0, 0, 1)
    assert b["sentences"] == [
        {"start": 0, "end": 10, "support": 0.9, "evidence": [[0, 17]], "cut": False},
        {"start": 11, "end": 21, "support": 0.2, "evidence": [[18, 37]], "cut": False},
    ]
    assert (a["score"], a["label"], a["system"]) == (0.3, 0, "s2")
    assert c["score"] is None and c["sentences"] == [] and c["label"] == 1
    assert payload["support_range"] == [0.2, 0.9]
    assert payload["evidence_kind"] == "best chunk"
    assert payload["metrics"] == [["roc_auc", 0.8]]
    # a: 0.3 < 0.5, inconsistent: agrees. b: 0.55 >= 0.5 but inconsistent: disagrees. c: unscored.
    assert payload["summary"] == {
        "n_examples": 3,
        "n_data": 4,
        "n_unscored": 1,
        "n_labelled": 3,
        "n_inconsistent": 2,
        "n_below_threshold": 1,
        "n_disagree": 1,
        "mean_score": pytest.approx(0.425),
        "n_sentences": 3,
        "n_qas": 0,
        "n_gold_spans": 0,
        "n_with_gold": 0,
        "n_predicted_spans": 0,
    }


def token_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Example b scored with evidence sentences and token support: "bark" unsupported (P 0.8), the rest supported."""
    data, scores = hand_tables()
    scores = scores[scores["example_id"] == "b"].copy()
    evidence = [
        {"source_sentence": 1, "start": 18, "end": 37, "support": 0.7},
        {"source_sentence": 0, "start": 0, "end": 17, "support": 0.1},
    ]
    scores["sentences"] = [
        [
            sentence(0, 10, 0.9, (0, 37)) | {"evidence": evidence[::-1]},
            sentence(11, 21, 0.2, (0, 37)) | {"evidence": evidence, "error_types": TYPES},
        ]
    ]
    pieces = [(0, 4, 0.9), (5, 9, 0.9), (9, 10, 0.95), (11, 15, 0.7), (16, 20, 0.2), (20, 21, 0.9)]
    scores["tokens"] = [[{"start": a, "end": b, "support": v} for a, b, v in pieces]]
    return data, scores


TYPES = {"EntE": 0.1, "CircE": 0.1, "RelE": 0.05, "CorefE": 0.05, "OutE": 0.7}
# "bark" is in the source, and the best evidence sentence of its output sentence is the source's second
BARK_EXPLANATION = (
    '"bark" is in the source, but not as the output states it; the closest source sentence (sentence 2) says '
    '"Dogs bark at night."'
)


def test_evidence_sentences_and_predicted_spans_enter_the_payload() -> None:
    data, scores = token_tables()
    payload = build_payload(data, scores, benchmark="toy", scorer="alignscore", settings=SETTINGS)
    (b,) = payload["examples"]
    # each sentence's evidence is its best sentence inside the best chunk, not the chunk
    assert [s["evidence"] for s in b["sentences"]] == [[[0, 17]], [[18, 37]]]
    assert payload["evidence_kind"] == "best source sentence of the best chunk"
    # "bark": 1 - 0.2 > 0.5, with its explanation and its sentence's most likely error type
    assert b["spans"] == [
        {
            "start": 16,
            "end": 20,
            "probability": pytest.approx(0.8),
            "explanation": BARK_EXPLANATION,
            "error_type": "OutE",
            "error_type_probability": 0.7,
            "fava_type": "unverifiable",
        }
    ]
    assert payload["summary"]["n_predicted_spans"] == 1
    strict = LocaliseSettings(threshold=0.5, page_size=50, token_threshold=0.85)
    assert build_payload(data, scores, benchmark="toy", scorer="alignscore", settings=strict)["examples"][0]["spans"] == []


def test_a_token_gold_table_gives_its_unsupported_runs(tmp_path: Path) -> None:
    # the localisation analysis's gold format, for b and for an example the benchmark lacks (left out)
    rows = [
        {"example_id": "b", "token_offsets": json.dumps([[0, 4], [5, 9], [9, 10], [11, 15], [16, 20], [20, 21]]),
         "token_labels": json.dumps([1, 1, 1, 0, 0, 1])},
        {"example_id": "zz", "token_offsets": json.dumps([[0, 3]]), "token_labels": json.dumps([0])},
    ]  # fmt: skip
    pd.DataFrame(rows).to_parquet(tmp_path / "gold.parquet")
    gold = read_gold(tmp_path / "gold.parquet")
    assert gold[["example_id", "start", "end", "side"]].values.tolist() == [["b", 11, 20, "output"], ["zz", 0, 3, "output"]]
    data, scores = token_tables()
    payload = build_payload(data, scores, benchmark="toy", scorer="alignscore", settings=SETTINGS, gold=gold)
    assert payload["examples"][0]["gold"] == [{"side": "output", "start": 11, "end": 20, "note": "unsupported (annotated)"}]


def test_checker_thresholds_replace_the_configured_one(tmp_path: Path) -> None:
    card = {"threshold": 0.61, "threshold_source": "balanced accuracy on validation", "token_threshold": 0.7}
    (tmp_path / "checker.json").write_text(json.dumps(card | {"token_threshold_source": "token F1 on wice dev"}))
    settings = checker_thresholds(SETTINGS, str(tmp_path))
    assert (settings.threshold, settings.token_threshold, settings.page_size) == (0.61, 0.7, 50)
    assert "balanced accuracy on validation" in settings.threshold_source and "wice dev" in settings.threshold_source


def qa_unit(spans: list[list[int]], score: float, chunk: tuple[int, int], kind: str = "qa", question: str = "") -> dict:
    """A unit of QASemConsistency's score table (score/qasem_consistency.py `_record`)."""
    return {"unit": kind, "qa_id": None, "sentence_index": 0, "output_spans": spans, "question": question or None,
            "answer": "Cats" if kind == "qa" else None, "hypothesis": "h", "score": score, "supported": score >= 0.5,
            "best_chunk": 0, "chunk_start": chunk[0], "chunk_end": chunk[1], "premise_pieces_cut": 0}  # fmt: skip


def qa_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Example a ("Cats bark.") scored by two QAs sharing the predicate "bark"; b by its two sentences (no QA)."""
    data, _ = hand_tables()
    scores = pd.DataFrame(
        {
            "example_id": ["a", "b"],
            "score": [0.5, 0.5],
            "units": [
                [
                    qa_unit([[5, 9], [0, 4]], 0.2, (18, 37), question="What barks?"),
                    qa_unit([[5, 9]], 0.7, (0, 17), question="What do cats do?"),
                ],
                [qa_unit([[0, 10]], 0.9, (0, 17), kind="sentence"), qa_unit([[11, 21]], 0.3, (18, 37), kind="sentence")],
            ],
        }
    )
    return data, scores


def test_qa_units_become_qas_and_fallback_sentences() -> None:
    data, scores = qa_tables()
    payload = build_payload(data, scores, benchmark="toy", scorer="qasem_consistency", settings=SETTINGS)
    a, b = payload["examples"]
    assert a["sentences"] == [] and a["qas"] == [
        {"question": "What barks?", "answer": "Cats", "support": 0.2, "spans": [[5, 9], [0, 4]], "evidence": [[18, 37]],
         "cut": False},
        {"question": "What do cats do?", "answer": "Cats", "support": 0.7, "spans": [[5, 9]], "evidence": [[0, 17]],
         "cut": False},
    ]  # fmt: skip
    assert b["qas"] == [] and b["sentences"] == [
        {"start": 0, "end": 10, "support": 0.9, "evidence": [[0, 17]], "cut": False},
        {"start": 11, "end": 21, "support": 0.3, "evidence": [[18, 37]], "cut": False},
    ]
    assert payload["summary"]["n_qas"] == 2 and payload["summary"]["n_sentences"] == 2
    assert payload["support_range"] == [0.2, 0.9] and payload["evidence_kind"] == "best chunk"
    scores.loc[0, "units"][0]["output_spans"] = [[5, 11]]  # past "Cats bark."'s 10 characters
    with pytest.raises(DataError, match="QA span"):
        build_payload(data, scores, benchmark="toy", scorer="qasem_consistency", settings=SETTINGS)


def test_disagreement_truth_table() -> None:
    assert disagrees(0.5, 0, 0.5) is True  # at the threshold reads as consistent
    assert disagrees(0.49, 1, 0.5) is True
    assert disagrees(0.49, 0, 0.5) is False and disagrees(0.9, 1, 0.5) is False
    assert disagrees(None, 1, 0.5) is None and disagrees(0.9, None, 0.5) is None


def test_evidence_of_each_scorer_family() -> None:
    assert sentence_evidence({"chunk_start": 3, "chunk_end": 9}) == ([[3, 9]], "best chunk")
    assert sentence_evidence({"source_start": 0, "source_end": 5}) == ([[0, 5]], "best source sentence")
    triples = [
        {"source_start": 10, "source_end": 20},
        {"source_start": 0, "source_end": 5},
        {"source_start": 10, "source_end": 20},
    ]
    assert sentence_evidence({"triples": triples}) == ([[0, 5], [10, 20]], "best source sentence of each triple")
    assert sentence_evidence({"support": 0.4}) == ([], None)


def test_a_triple_whose_source_has_no_triple_has_no_evidence() -> None:
    # What openie_triples writes when the source yielded no triple (seen on SummaC's XSumFaith cut in the
    # full run, where it stopped report_localise): the output triple, unmatched, with no source span.
    from factlab.score.openie_triples import _match_triples

    (unmatched,) = _match_triples([(0, "he", "won", "the cup")], [], [], {}, np.zeros((0, 4)), 0.5)
    assert unmatched["source_start"] is None and not unmatched["matched"]
    triples = [unmatched, {"source_start": 0, "source_end": 5}]
    assert sentence_evidence({"triples": triples}) == ([[0, 5]], "best source sentence of each triple")


def test_gold_spans_are_placed_and_checked(tmp_path: Path) -> None:
    data, scores = hand_tables()
    path = tmp_path / "gold.csv"
    pd.DataFrame(
        {
            "example_id": ["b", "b", "d"],
            "start": [5, 0, 0],
            "end": [9, 4, 5],
            "side": ["output", "source", None],
            "note": ["RelE", None, "x"],
        }
    ).to_csv(path, index=False)
    payload = build_payload(data, scores, benchmark="toy", scorer="alignscore", settings=SETTINGS, gold=read_gold(path))
    b = payload["examples"][1]
    assert b["gold"] == [
        {"side": "output", "start": 5, "end": 9, "note": "RelE"},  # "purr"
        {"side": "source", "start": 0, "end": 4, "note": ""},  # "Cats"
    ]
    assert payload["summary"]["n_gold_spans"] == 2 and payload["summary"]["n_with_gold"] == 1  # d is not scored

    pd.DataFrame({"example_id": ["zz"], "start": [0], "end": [1]}).to_csv(path, index=False)
    with pytest.raises(DataError, match="lacks"):
        build_payload(data, scores, benchmark="toy", scorer="alignscore", settings=SETTINGS, gold=read_gold(path))
    pd.DataFrame({"example_id": ["a"], "start": [0], "end": [99]}).to_csv(path, index=False)
    with pytest.raises(DataError, match="outside its text"):
        build_payload(data, scores, benchmark="toy", scorer="alignscore", settings=SETTINGS, gold=read_gold(path))
    pd.DataFrame({"example_id": ["a"], "start": [4], "end": [4]}).to_csv(path, index=False)
    with pytest.raises(DataError, match="start < end"):
        read_gold(path)
    pd.DataFrame({"example_id": ["a"], "start": [0], "end": [4], "side": ["summary"]}).to_csv(path, index=False)
    with pytest.raises(DataError, match="side"):
        read_gold(path)


def test_bad_offsets_and_unknown_examples_are_errors() -> None:
    data, scores = hand_tables()
    scores.loc[0, "sentences"][0]["chunk_end"] = 38  # past SOURCE_A's 37 characters
    with pytest.raises(DataError, match="evidence span"):
        build_payload(data, scores, benchmark="toy", scorer="alignscore", settings=SETTINGS)
    data, scores = hand_tables()
    with pytest.raises(DataError, match="scores table repeats 1 example_ids"):
        build_payload(data, pd.concat([scores, scores.head(1)]), benchmark="toy", scorer="alignscore", settings=SETTINGS)
    with pytest.raises(DataError, match="not in the benchmark"):
        build_payload(data[data["example_id"] != "a"], scores, benchmark="toy", scorer="alignscore", settings=SETTINGS)


def test_metrics_row_from_the_detection_csv(tmp_path: Path) -> None:
    metrics = dict(read_metrics(AUC, "true_frank", "alignscore"))
    assert metrics["roc_auc"] == pytest.approx(0.81218) and metrics["n"] == 671
    assert metrics["bacc_val_tuned"] is None  # empty cell, not NaN (the page's JSON has no NaN)
    assert "scorer" not in metrics and "benchmark" not in metrics
    with pytest.raises(FactlabError, match="0 metric rows"):
        read_metrics(AUC, "true_frank", "rouge")
    nested = tmp_path / "metrics.json"
    nested.write_text(json.dumps({"auc": {"alignscore": 0.8, "rouge": None}, "sets": ["a", "b"], "n": 3}))
    assert read_metrics(nested, "x", "y") == flatten_metrics(
        {"auc": {"alignscore": 0.8, "rouge": None}, "sets": ["a", "b"], "n": 3}
    )
    assert read_metrics(nested, "x", "y") == [("auc.alignscore", 0.8), ("auc.rouge", None), ("sets", '["a", "b"]'), ("n", 3)]


# --- escaping -----------------------------------------------------------------------------------------------------


class Elements(html.parser.HTMLParser):
    """Start tags and the text of each script element."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


def evil_payload() -> dict:
    data, scores = hand_tables()
    data.loc[data["example_id"] == "a", ["system", "output"]] = [EVIL, "Cats bark." + EVIL]
    data.loc[data["example_id"] == "a", "source"] = SOURCE_A + EVIL
    return build_payload(data, scores, benchmark="x<b>y", scorer=EVIL, settings=SETTINGS, metrics=[(EVIL, EVIL)])


def test_malicious_text_cannot_become_markup() -> None:
    payload = evil_payload()
    page = render_html(payload)
    parser = Elements()
    parser.feed(page)
    assert parser.tags.count("script") == 2  # the data and the app: no injected script element
    assert "img" not in parser.tags and "b" not in parser.tags
    assert json.loads(parser.scripts[0]) == json.loads(json.dumps(payload))  # the data survives the escaping intact
    assert "</script><script>" not in page and "<img" not in page and "<!--" not in page.split("<body>")[1]
    assert "&lt;/script&gt;" in page  # the header shows the scorer's name as text
    assert "<" not in script_json({"text": EVIL}) and "&" not in script_json({"text": EVIL})
    assert "</script" not in PAGE_JS.lower() and "</style" not in PAGE_CSS.lower() and "innerHTML" not in PAGE_JS


def test_command_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    args = [
        "report",
        "localise",
        "--benchmark",
        "true_frank",
        "--scorer",
        "alignscore",
        "--data",
        str(DATA),
        "--scores",
        str(SCORES),
    ]
    assert main([*args, "--threshold", "0.5", "--page-size", "10", "--metrics", str(AUC), "--out", str(out)]) == 0
    page = out.read_text()
    assert "<dt>roc_auc</dt><dd>0.8122</dd>" in page and "<dd>22 of 22</dd>" in page
    with pytest.raises(SystemExit):  # a parameter has no default: the rule passes params.yaml's value
        main([*args, "--page-size", "10", "--out", str(out)])


# --- the page in a browser ----------------------------------------------------------------------------------------


def chromium() -> str:
    found = os.environ.get("FACTLAB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("FACTLAB_REQUIRE_BROWSER"):
        pytest.fail("FACTLAB_REQUIRE_BROWSER is set but no chromium was found (apt-get install chromium)")
    pytest.skip("no chromium (apt-get install chromium); set FACTLAB_REQUIRE_BROWSER to make this a failure")


def browse(page: Path, fragment: str = "", *, screenshot: Path | None = None, height: int = 1600) -> tuple[str, str, float]:
    """The DOM after the page's scripts ran (or a screenshot), Chromium's log, and the wall-clock seconds."""
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={page.parent / '.chromium'}",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=5000",
    ]
    command += [f"--window-size=1400,{height}", f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    started = time.perf_counter()
    result = subprocess.run([*command, page.resolve().as_uri() + fragment], capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - started
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, result.stderr, seconds


def console_messages(log: str) -> list[str]:
    """Console output and uncaught errors of the page (the page itself logs nothing)."""
    return [line for line in log.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def app_attributes(dom: str) -> dict[str, str]:
    return dict(re.findall(r'(data-[a-z-]+)="([^"]*)"', re.search(r'<main id="app"[^>]*>', dom).group(0)))


def count_attributes(dom: str) -> dict[str, str]:
    match = re.search(r'<p id="count"([^>]*)>([^<]*)', dom)
    return dict(re.findall(r'(data-[a-z-]+)="([^"]*)"', match.group(1))) | {"text": match.group(2)}


def cards(dom: str) -> list[str]:
    return re.findall(r'<article class="example" data-example-id="([^"]*)"', dom)


def fixture_page(tmp_path: Path, page_size: int) -> tuple[Path, dict]:
    payload = build_payload(
        pd.read_parquet(DATA),
        pd.read_parquet(SCORES),
        benchmark="true_frank",
        scorer="alignscore",
        settings=LocaliseSettings(threshold=0.5, page_size=page_size),
        metrics=read_metrics(AUC, "true_frank", "alignscore"),
    )
    page = tmp_path / "true_frank_alignscore.html"
    page.write_text(render_html(payload))
    return page, payload


def test_page_loads_pages_and_filters_in_chromium(tmp_path: Path) -> None:
    page, payload = fixture_page(tmp_path, page_size=10)
    dom, log, _ = browse(page)
    assert console_messages(log) == []
    assert app_attributes(dom).get("data-ready") == "1" and "data-errors" not in app_attributes(dom)
    scores = pd.read_parquet(SCORES).sort_values(["score", "example_id"])
    assert cards(dom) == scores["example_id"].head(10).tolist()  # lowest-scored first
    count = count_attributes(dom)
    assert (count["data-total"], count["data-matching"], count["data-shown"], count["data-pages"]) == ("22", "22", "10", "3")
    assert count["text"] == "Showing 1\u201310 of 22 matching examples (22 in total)"
    assert dom.count('class="sentence') == sum(len(s) for s in scores["sentences"].head(10))
    assert dom.count('class="evidence active"') >= 10  # each card shows its weakest sentence's evidence

    dom, log, _ = browse(page, "#filter=disagree")
    assert console_messages(log) == []
    disagreeing = [e["id"] for e in payload["examples"] if disagrees(e["score"], e["label"], 0.5)]
    assert int(count_attributes(dom)["data-matching"]) == payload["summary"]["n_disagree"] == len(disagreeing) == 8
    assert sorted(cards(dom)) == sorted(disagreeing)
    assert dom.count('class="badge warn disagrees"') == 8

    dom, _, _ = browse(page, "#filter=disagree&threshold=0.3&page=2&sort=id")
    at_03 = sorted(e["id"] for e in payload["examples"] if disagrees(e["score"], e["label"], 0.3))
    count = count_attributes(dom)
    assert int(count["data-matching"]) == len(at_03) and count["data-page"] == "2"
    assert cards(dom) == at_03[10:20]

    example = payload["examples"][3]
    dom, _, _ = browse(page, "#q=" + example["output"].split()[2].upper())
    assert example["id"] in cards(dom)

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "true_frank_alignscore.png"
    shot.unlink(missing_ok=True)
    browse(page, screenshot=shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


DRIVER = """<script>
(function () {
  var out = {};
  function count() { return document.getElementById("count").getAttribute("data-matching"); }
  var filter = document.getElementById("filter");
  filter.value = "disagree";
  filter.dispatchEvent(new Event("change"));
  out.disagree = count();
  document.querySelector(".toolbar .next").click();
  out.page = document.getElementById("count").getAttribute("data-page");
  out.hash = location.hash;
  var first = document.querySelector("#examples .example");
  var sentences = first.querySelectorAll("[data-sentence]");
  sentences[sentences.length - 1].click();
  out.selected = first.querySelector(".sentence.selected").getAttribute("data-sentence");
  var search = document.getElementById("q");
  search.value = "zzz-no-such-text";
  search.dispatchEvent(new Event("input"));
  setTimeout(function () {
    out.search = count();
    document.body.setAttribute("data-driver", JSON.stringify(out));
  }, 400);
}());
</script>
</body>"""


def test_controls_drive_the_page(tmp_path: Path) -> None:
    page, payload = fixture_page(tmp_path, page_size=5)
    driven = tmp_path / "driven.html"
    driven.write_text(page.read_text().replace("</body>", DRIVER))
    dom, log, _ = browse(driven)
    assert console_messages(log) == []
    result = json.loads(html.unescape(re.search(r'data-driver="([^"]*)"', dom).group(1)))
    assert result["disagree"] == str(payload["summary"]["n_disagree"])
    assert result["page"] == "2" and result["hash"] == "#filter=disagree&page=2"
    assert result["search"] == "0"
    assert result["selected"] is not None


def test_qas_render_in_chromium(tmp_path: Path) -> None:
    """QASemConsistency's page: each QA listed with its support, the output coloured by the weakest QA covering it."""
    data, scores = qa_tables()
    page = tmp_path / "qas.html"
    page.write_text(render_html(build_payload(data, scores, benchmark="toy", scorer="qasem_consistency", settings=SETTINGS)))
    dom, log, _ = browse(page, "#sort=id")
    assert console_messages(log) == []
    assert app_attributes(dom).get("data-ready") == "1" and cards(dom) == ["a", "b"]
    items = [html.unescape(text) for text in re.findall(r'<li class="qa-item"[^>]*>([^<]*)</li>', dom)]
    assert items == ["What barks? \u2192 Cats: 0.200", "What do cats do? \u2192 Cats: 0.700"]
    covered = {text: (qa, html.unescape(title)) for qa, title, text in re.findall(
        r'<span class="qa"[^>]*data-qa="(\d)"[^>]*title="([^"]*)"[^>]*>([^<]*)</span>', dom)}  # fmt: skip
    assert set(covered) == {"Cats", "bark"}  # QA 1's answer; the predicate both QAs share, coloured by the weaker
    assert covered["Cats"] == ("0", "QA 1: What barks? \u2192 Cats: support 0.200")
    assert covered["bark"][0] == "0" and covered["bark"][1].splitlines()[1].startswith("QA 2: What do cats do?")
    assert dom.count('class="sentence') == 2  # b: its two sentences
    assert "predicted unsupported (support &lt; 0.5): QA 1" in dom
    card_a = dom[dom.index('data-example-id="a"') : dom.index('data-example-id="b"')]
    # no sentence to select: the source shows the weakest QA's best chunk ([18, 37) of SOURCE_A)
    assert re.findall(r'<span class="evidence active"[^>]*>([^<]*)</span>', card_a) == [SOURCE_A[18:37]]
    assert "Source \u2014 best chunk for QA 1" in card_a
    assert "evidence of the selected sentence or, without one, the weakest QA" in dom


# The checker's fix of example b, as factlab checker correction writes it: "bark" deleted, support 0.2 -> 0.6
CORRECTIONS = pd.DataFrame(
    {
        "example_id": ["b", "a"],
        "changed": [True, False],
        "corrected": ["Cats purr. Dogs.", "Cats bark."],
        "edits": [
            json.dumps(
                [{"start": 15, "end": 20, "text": " bark", "replacement": "", "support_before": 0.2, "support_after": 0.6}]
            ),
            "[]",
        ],
    }
)


def test_corrections_enter_the_payload(tmp_path: Path) -> None:
    path = tmp_path / "corrections.parquet"
    CORRECTIONS.to_parquet(path)
    corrections = read_corrections(str(path))
    assert list(corrections) == ["b"]  # only the changed outputs
    data, scores = token_tables()
    payload = build_payload(data, scores, benchmark="toy", scorer="alignscore", settings=SETTINGS, corrections=corrections)
    assert payload["examples"][0]["correction"]["text"] == "Cats purr. Dogs."
    with pytest.raises(DataError, match="lacks columns"):
        CORRECTIONS.drop(columns="edits").to_parquet(path)
        read_corrections(str(path))


def test_predicted_spans_and_evidence_sentences_render_in_chromium(tmp_path: Path) -> None:
    data, scores = token_tables()
    path = tmp_path / "corrections.parquet"
    CORRECTIONS.to_parquet(path)
    page = tmp_path / "tokens.html"
    payload = build_payload(
        data, scores, benchmark="toy", scorer="alignscore", settings=SETTINGS, corrections=read_corrections(str(path))
    )
    page.write_text(render_html(payload))
    dom, log, _ = browse(page, "#sort=id")
    assert console_messages(log) == []
    marked = re.findall(r'<span class="sentence[^"]*predicted"[^>]*title="([^"]*)"[^>]*>([^<]*)</span>', dom)
    assert [(text, html.unescape(title).splitlines()[-2:]) for title, text in marked] == [
        ("bark", ["unsupported: P 0.800; OutE 0.700, FAVA unverifiable", BARK_EXPLANATION])
    ]
    # the notes list each span with its type and explanation
    items = [html.unescape(item) for item in re.findall(r'<li class="span-item">([^<]*)</li>', dom)]
    assert items == ["\u201cbark\u201d (P 0.800; OutE 0.700, FAVA unverifiable): " + BARK_EXPLANATION]
    # and the suggested fix, with each edit and the support it moves
    fix = re.findall(r'<li class="correction">([^<]*)<ol class="edits"><li class="edit">([^<]*)</li>', dom)
    assert [tuple(html.unescape(part) for part in found) for found in fix] == [
        ("suggested fix: \u201cCats purr. Dogs.\u201d", "\u201c bark\u201d \u2192 deleted (support 0.200 \u2192 0.600)")
    ]
    assert "unsupported (token head, P &gt; 0.500)" in dom
    # the weakest sentence is selected: its best evidence sentence, not the whole chunk, is lit in the source
    assert re.findall(r'<span class="evidence active"[^>]*>([^<]*)</span>', dom) == [SOURCE_A[18:37]]


def test_malicious_text_stays_text_in_chromium(tmp_path: Path) -> None:
    page = tmp_path / "evil.html"
    page.write_text(render_html(evil_payload()))
    dom, log, _ = browse(page, "#sort=id")
    assert console_messages(log) == []
    title = html.unescape(re.search(r"<title>(.*?)</title>", dom, re.S).group(1))
    assert title == f"x<b>y \u00b7 {EVIL}: where support is localised"  # not "pwned": no handler ran
    assert "<img" not in dom and dom.count("<script") == 2
    shown = html.escape(EVIL, quote=False)  # how a text node holding EVIL serialises
    assert dom.count(shown) >= 3  # the system, the output's tail and the source's, as literal text


def test_five_thousand_examples_render_one_page(tmp_path: Path) -> None:
    """5,000 examples (the 22 real rows repeated, each copy with its own sources): one page of 50 renders."""
    data, scores = pd.read_parquet(DATA), pd.read_parquet(SCORES)
    copies = -(-5000 // len(data))
    data = pd.concat(
        data.assign(example_id=data["example_id"] + f"-{k:03d}", source=data["source"] + f" [{k}]") for k in range(copies)
    )
    scores = pd.concat(scores.assign(example_id=scores["example_id"] + f"-{k:03d}") for k in range(copies))
    started = time.perf_counter()
    payload = build_payload(
        data.head(5000), scores.head(5000), benchmark="true_frank_x5000", scorer="alignscore", settings=SETTINGS
    )
    page = tmp_path / "scale.html"
    page.write_text(render_html(payload))
    build_seconds = time.perf_counter() - started

    dom, log, seconds = browse(page)
    assert console_messages(log) == []
    assert len(cards(dom)) == 50 and dom.count('<article class="example"') == 50
    count = count_attributes(dom)
    assert (count["data-total"], count["data-shown"], count["data-pages"]) == ("5000", "50", "100")
    dom_last, _, _ = browse(page, "#page=100&sort=score-desc")
    assert len(cards(dom_last)) == 50 and count_attributes(dom_last)["data-page"] == "100"

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browse(page, screenshot=ARTIFACTS / "scale_5000.png", height=900)
    measured = {
        "examples": 5000,
        "distinct_sources": len(payload["sources"]),
        "html_mb": round(page.stat().st_size / 1e6, 2),
        "build_and_render_html_s": round(build_seconds, 2),
        "chromium_dump_dom_wall_s": round(seconds, 2),
        "first_render_ms": float(app_attributes(dom)["data-render-ms"]),
        "ready_since_navigation_ms": float(app_attributes(dom)["data-ready-ms"]),
    }
    (ARTIFACTS / "scale_5000.json").write_text(json.dumps(measured, indent=2) + "\n")
    print("report localise at 5,000 examples:", json.dumps(measured))

"""`factlab check` as a command-line user meets it: strict JSON out, its input never overwritten, one writer per
output, misspelt columns named, Ctrl-C, stdin/stdout, --threshold, --quiet, toy checkers; the Python API's own
wording; `factlab export`'s permissions and tokenizer; and command-line help that imports no heavy library.

The checker is test_checker's tiny seeded aligner folder on real QAGS-XSum pairs (tests/fixtures)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import test_checker
from test_checker import COLUMNS, PAIRS

import factlab
from factlab.checker.folder import CARD_FILE, CheckerSettings
from factlab.cli import STAGES
from factlab.errors import DataErrors, FactlabError
from factlab.workflow.codedeps import literal_constant, module_file

HEAVY = ("torch", "transformers", "pandas", "numpy", "scipy", "sklearn")
checker_dir = test_checker.checker_dir  # the fixtures: the tiny checker folder and the pairs it checks
upstream = test_checker.upstream


def factlab_command(*arguments: str | Path, **options: object) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "factlab", *map(str, arguments)]
    return subprocess.run(command, capture_output=True, text=True, check=False, **options)  # type: ignore[call-overload]


def default_sigint() -> None:
    """SIGINT's default action in a child, whatever this test runner's is (an ignored SIGINT is inherited)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def strict_rows(text: str) -> list[dict]:
    """Every line parsed as strict JSON: NaN, Infinity and -Infinity are errors."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return [json.loads(line, parse_constant=refuse) for line in text.splitlines()]


def last_line(text: str) -> str:
    return [line for line in text.splitlines() if line.strip()][-1]


# --- 1. strict JSON ---------------------------------------------------------------------------------------------------


def test_missing_scores_and_labels_are_null_in_strict_json(checker_dir: Path, upstream: pd.DataFrame, tmp_path: Path) -> None:
    """A scorable row beside one without words ("! ! !": no score) and labels that are NaN or absent: every line
    parses as strict JSON, with null for the missing score and labels and the labels read kept as they were."""
    records = upstream.head(3).to_dict("records")
    lines = [
        json.dumps(records[0]),
        json.dumps({**records[1], "summary": "! ! !"}).replace(json.dumps(records[1]["faithful"]), "NaN"),
        json.dumps({key: value for key, value in records[2].items() if key != "faithful"}),
    ]
    assert "NaN" in lines[1] and json.loads(lines[1])["faithful"] != json.loads(lines[1])["faithful"]  # Python reads NaN
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("\n".join(lines) + "\n")
    out = tmp_path / "scores.jsonl"
    done = factlab_command("check", pairs, "-o", out, "--model", checker_dir, *COLUMNS)
    assert done.returncode == 0, done.stderr
    rows = strict_rows(out.read_text())
    assert [row["id"] for row in rows] == [record["id"] for record in records]
    assert rows[1]["score"] is None and rows[1]["consistent"] is None
    assert isinstance(rows[0]["score"], float) and isinstance(rows[2]["score"], float)
    assert [row["label"] for row in rows] == [records[0]["faithful"], None, None]
    assert not (tmp_path / "scores.jsonl.lock").exists()


# --- 2. the input is never overwritten; one writer per output ---------------------------------------------------------


@pytest.mark.parametrize("link", ["same path spelt differently", "symbolic link", "hard link"])
def test_an_output_that_is_the_input_is_refused(link: str, tmp_path: Path) -> None:
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(PAIRS.read_text())
    out = {"same path spelt differently": "./p.jsonl", "symbolic link": "link.jsonl", "hard link": "hard.jsonl"}[link]
    if link == "symbolic link":
        (tmp_path / out).symlink_to(pairs)
    elif link == "hard link":
        os.link(pairs, tmp_path / out)
    assert os.path.samefile(pairs, tmp_path / out)
    done = factlab_command("check", "p.jsonl", "-o", out, "--model", "unused", *COLUMNS, cwd=tmp_path)
    assert done.returncode == 1
    assert last_line(done.stderr).startswith("factlab: error: --out") and "overwrite" in last_line(done.stderr)
    assert pairs.read_text() == PAIRS.read_text()


def test_a_second_check_writing_the_same_output_is_refused(tmp_path: Path) -> None:
    """While another process holds OUT.lock (as a running `factlab check` does), a check of OUT stops at once,
    writes nothing and leaves the other's lock alone."""
    out = tmp_path / "scores.jsonl"
    lock = tmp_path / "scores.jsonl.lock"
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = factlab_command("check", PAIRS, "-o", out, "--model", "unused", *COLUMNS)
    assert done.returncode == 1, done.stderr
    assert last_line(done.stderr).startswith("factlab: error: another factlab check is writing")
    assert str(out) in last_line(done.stderr) and "Traceback" not in done.stderr
    assert not out.exists() and lock.exists()


# --- 3. misspelt columns ----------------------------------------------------------------------------------------------


def test_a_named_id_column_the_file_lacks_is_an_error(tmp_path: Path) -> None:
    out = tmp_path / "scores.jsonl"
    done = factlab_command("check", PAIRS, "-o", out, "--model", "unused", *COLUMNS, "--id-column", "idd")
    assert done.returncode == 1 and not out.exists()
    message = last_line(done.stderr)
    assert message.startswith("factlab: error: no column 'idd' for the ids")
    for column in pd.read_json(PAIRS, lines=True).columns:
        assert repr(column) in message


def test_a_named_label_column_the_file_lacks_is_warned_about(checker_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "scores.jsonl"
    arguments = ["--source-column", "document", "--output-column", "summary", "--label-column", "faithfull"]
    done = factlab_command("check", PAIRS, "-o", out, "--model", checker_dir, *arguments)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "'faithfull'" in warnings[0] and "'faithful'" in warnings[0]
    rows = strict_rows(out.read_text())
    assert [row["id"] for row in rows] == pd.read_json(PAIRS, lines=True)["id"].tolist()
    assert all("label" not in row for row in rows)


# --- 4. Ctrl-C --------------------------------------------------------------------------------------------------------


def interrupted_check(command: list[str], out: Path, *, after_rows: int) -> subprocess.CompletedProcess[str]:
    """Run `command` and send SIGINT once `after_rows` rows (0: the output's lock) are in OUT.partial."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    lock, partial = out.with_name(out.name + ".lock"), out.with_name(out.name + ".partial")

    def reached() -> bool:
        if not after_rows:
            return lock.exists()
        return partial.is_file() and partial.read_text().count("\n") >= after_rows

    deadline = time.monotonic() + 300
    while not reached() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert reached(), "the check never got there"
    if not after_rows:
        time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def test_ctrl_c_exits_130_with_one_line_and_leaves_no_output(checker_dir: Path, upstream: pd.DataFrame, tmp_path: Path) -> None:
    """SIGINT once the check holds its output's lock (it then loads and scores): exit 130, the last line says so, no
    traceback, no output and no lock; at most the partial output and its record, for a resume."""
    many = pd.concat([upstream.assign(id=upstream["id"] + f"-{copy}") for copy in range(30)], ignore_index=True)
    pairs = tmp_path / "pairs.jsonl"
    many.to_json(pairs, orient="records", lines=True)
    out = tmp_path / "out" / "scores.jsonl"
    command = [sys.executable, "-m", "factlab", "check", str(pairs), "-o", str(out), "--model", str(checker_dir), *COLUMNS]
    done = interrupted_check(command, out, after_rows=0)
    assert done.returncode == 130, done.stderr
    assert last_line(done.stderr) == "factlab: interrupted"
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert {path.name for path in out.parent.iterdir()} <= {"scores.jsonl.partial", "scores.jsonl.partial.json"}


def test_an_interrupted_check_resumes_where_it_stopped(checker_dir: Path, upstream: pd.DataFrame, tmp_path: Path) -> None:
    """Ctrl-C after the first step keeps its rows; the same command checks only the rest, and the file is the one an
    uninterrupted check writes, byte for byte. A partial output of other pairs is started over."""
    many = pd.concat([upstream.assign(id=upstream["id"] + f"-{copy}") for copy in range(40)], ignore_index=True)
    pairs = tmp_path / "pairs.jsonl"
    many.to_json(pairs, orient="records", lines=True)
    out, whole = tmp_path / "scores.jsonl", tmp_path / "whole.jsonl"
    command = [sys.executable, "-m", "factlab", "check", str(pairs), "--model", str(checker_dir), *COLUMNS]
    done = interrupted_check([*command, "-o", str(out)], out, after_rows=1)
    assert done.returncode == 130, done.stderr
    kept = out.with_name("scores.jsonl.partial").read_text().count("\n")
    assert 0 < kept < len(many) and not out.exists()
    assert f"{kept} of {len(many)} rows kept in" in done.stderr
    resumed = factlab_command("check", pairs, "-o", out, "--model", checker_dir, *COLUMNS)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming after the {kept} rows" in resumed.stderr
    assert f"{len(many)} rows ->" in last_line(resumed.stderr)
    assert factlab_command(*command[3:], "-o", whole).returncode == 0
    assert out.read_bytes() == whole.read_bytes()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["pairs.jsonl", "scores.jsonl", "whole.jsonl"]
    # a partial output left for other pairs is not taken for this input's rows
    out.with_name("scores.jsonl.partial").write_bytes(whole.read_bytes()[: whole.read_bytes().index(b"\n") + 1])
    out.with_name("scores.jsonl.partial.json").write_text(json.dumps({"fingerprint": "another input"}))
    again = factlab_command("check", pairs, "-o", out, "--model", checker_dir, *COLUMNS)
    assert again.returncode == 0 and "checking from the first row" in again.stderr
    assert out.read_bytes() == whole.read_bytes()


# --- 5. the Python API's own wording ----------------------------------------------------------------------------------


def test_python_errors_read_alone_in_the_api_s_words(checker_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No error raised to a Python caller points at command-line options or at lines printed above it."""
    monkeypatch.chdir(tmp_path)  # no results/checker/model here
    with pytest.raises(FactlabError) as no_model:
        factlab.Checker()
    a_file = tmp_path / "weights.bin"
    a_file.write_text("")
    with pytest.raises(FactlabError) as file_model:
        factlab.check(["a source"], ["an output"], model=a_file)
    with pytest.raises(DataErrors) as bad_pairs:
        factlab.check(["a text", "", None], ["x", "y", "z"], model=checker_dir)  # type: ignore[list-item]
    for error in (no_model.value, file_model.value, bad_pairs.value):
        message = str(error)
        assert "--model" not in message and "above" not in message, message
    assert "model=<checker folder" in str(no_model.value)
    assert f"model={str(a_file)!r}" in str(file_model.value)
    assert str(bad_pairs.value).startswith("2 bad record(s); the first: sources[1] is empty")
    assert bad_pairs.value.count == 2 and len(bad_pairs.value.details) == 2


def test_on_the_command_line_every_shown_record_then_the_error_is_the_last_line(tmp_path: Path) -> None:
    """25 bad records: the first 20 listed, a line counting the rest, and the one-line error last; no traceback."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps({"id": f"x{i}", "document": "A source.", "summary": " "}) + "\n" for i in range(25)))
    done = factlab_command("check", bad, "-o", tmp_path / "out.jsonl", "--model", "unused", *COLUMNS)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    listed = [line for line in lines if line.startswith("  record line ")]
    assert [line.split(",")[0] for line in listed] == [f"  record line {i}" for i in range(1, 21)]
    assert lines[-2:] == [
        "  ... and 5 more",
        f"factlab: error: 25 bad record(s); the first: {listed[0].strip()} (file {bad})",
    ]


# --- 7. stdin, stdout, --format, --threshold, --quiet ----------------------------------------------------------------


def test_stdin_to_stdout_with_a_format_and_a_threshold(checker_dir: Path, upstream: pd.DataFrame) -> None:
    """CSV on stdin (`- --format csv`), JSON lines on stdout (`-o -`), the summary on stderr; --threshold decides
    `consistent` and is the threshold each row reports. No id column: ids are row numbers, without a warning."""
    reference = factlab.check(upstream["document"].tolist(), upstream["summary"].tolist(), model=checker_dir)
    scores = sorted(reference["score"])
    threshold = round((scores[2] + scores[3]) / 2, 6)  # half the rows on each side
    recorded = CheckerSettings.from_json(checker_dir / CARD_FILE).threshold
    assert ((reference["score"] >= threshold) != (reference["score"] >= recorded)).any(), "the override must matter"
    csv = upstream[["document", "summary"]].to_csv(index=False)
    arguments = ["--source-column", "document", "--output-column", "summary", "--threshold", str(threshold)]
    done = factlab_command("check", "-", "--format", "csv", "-o", "-", "--model", checker_dir, *arguments, input=csv)
    assert done.returncode == 0, done.stderr
    rows = strict_rows(done.stdout)
    assert [row["id"] for row in rows] == [str(position) for position in range(len(upstream))]
    assert [row["score"] for row in rows] == pytest.approx(reference["score"].tolist(), abs=1e-5)
    assert [row["consistent"] for row in rows] == [score >= threshold for score in (row["score"] for row in rows)]
    assert {row["threshold"] for row in rows} == {threshold}
    assert "warning" not in done.stderr
    assert last_line(done.stderr).startswith(f"factlab check: {len(upstream)} rows -> <stdout>")


def test_stdin_is_jsonl_by_default_and_its_errors_name_it(checker_dir: Path) -> None:
    done = factlab_command("check", "-", "-o", "-", "--model", checker_dir, *COLUMNS, input='{"document": "x"\n')
    assert done.returncode == 1 and done.stdout == ""
    assert last_line(done.stderr).startswith("factlab: error: malformed JSON line") and "<stdin>" in last_line(done.stderr)


def test_threshold_outside_the_scores_range_is_a_usage_error() -> None:
    for value, problem in [
        ("1.5", "must be in [0, 1]"),
        ("-0.1", "must be in [0, 1]"),
        ("nan", "must be in [0, 1]"),
        ("high", "not a number"),
    ]:
        done = factlab_command("check", PAIRS, "-o", "-", "--threshold", value)
        assert done.returncode == 2 and f"argument --threshold: {problem}" in done.stderr, done.stderr


def test_format_reads_a_file_whose_suffix_is_not_its_format(upstream: pd.DataFrame, tmp_path: Path) -> None:
    """A CSV named .txt: read as CSV with --format csv; its errors name the file as given."""
    from factlab.checker.inputs import Columns, read_pairs

    text = tmp_path / "pairs.txt"
    upstream.to_csv(text, index=False)
    pairs = read_pairs(text, Columns("document", "summary", label="faithful"), format="csv")
    assert pairs["id"].tolist() == upstream["id"].tolist()
    assert pairs["source"].tolist() == upstream["document"].tolist() and pairs["label"].tolist() == upstream["faithful"].tolist()
    upstream.assign(summary=["", *upstream["summary"][1:]]).to_csv(text, index=False)
    with pytest.raises(DataErrors) as error:
        read_pairs(text, Columns("document", "summary"), format="csv")
    assert error.value.file == str(text) and str(text) in str(error.value)
    assert error.value.details == ["record line 2, field 'summary': output is empty (an empty cell, null or absent)"]


# --- 8. toy checkers --------------------------------------------------------------------------------------------------


def package(checker: Path, tmp_path: Path, train_pairs: int) -> subprocess.CompletedProcess[str]:
    """`factlab checker package` of the tiny aligner, with a mixture report of `train_pairs` training pairs."""
    (tmp_path / "mixture.json").write_text(json.dumps({"pairs": train_pairs + 19, "train_pairs": train_pairs}))
    (tmp_path / "leakage.json").write_text(json.dumps({"ngram": 8, "leaking_pairs": 0}))
    choice = {"words_per_chunk": 60, "aggregation": "min", "support_head": "three_way", "chunk_policy": "reference"}
    (tmp_path / "choice.json").write_text(json.dumps(choice))
    return factlab_command(
        "checker", "package", "--aligner", checker, "--choice", tmp_path / "choice.json",
        "--mixture-report", tmp_path / "mixture.json", "--leakage", tmp_path / "leakage.json",
        "--settings", json.dumps({"precision": "fp32"}), "--out-dir", tmp_path / "model",
    )  # fmt: skip


def test_a_smoke_sized_checker_says_it_is_a_toy(checker_dir: Path, tmp_path: Path) -> None:
    """343 training pairs (the smoke mixture's): checker.json records a toy and why, the model card says so first, in
    bold, and `factlab check` warns on stderr, even with --quiet (which leaves out progress bars and the summary)."""
    done = package(checker_dir, tmp_path, 343)
    assert done.returncode == 0, done.stderr
    card = json.loads((tmp_path / "model" / CARD_FILE).read_text())
    assert card["toy"] is True and "343" in card["toy_reason"]
    readme = (tmp_path / "model" / "README.md").read_text().splitlines()
    first = next(line for line in readme[1:] if line.strip())
    assert first.startswith("**") and first.endswith("**") and "toy" in first.lower()
    out = tmp_path / "scores.jsonl"
    checked = factlab_command("check", PAIRS, "-o", out, "--model", tmp_path / "model", *COLUMNS, "--quiet")
    assert checked.returncode == 0, checked.stderr
    assert len(strict_rows(out.read_text())) == len(pd.read_json(PAIRS, lines=True))
    toy = [line for line in checked.stderr.splitlines() if "toy" in line]
    assert len(toy) == 1 and toy[0].startswith("factlab check: warning:")
    assert "rows ->" not in checked.stderr and "%|" not in checked.stderr  # no summary, no progress bar


def test_a_fully_trained_checker_and_an_old_card_are_not_toys(checker_dir: Path, tmp_path: Path) -> None:
    done = package(checker_dir, tmp_path, 35_000)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "model" / CARD_FILE).read_text())["toy"] is False
    assert "toy" not in (tmp_path / "model" / "README.md").read_text().lower()
    old = {key: value for key, value in CheckerSettings().as_json().items() if not key.startswith("toy")}
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert CheckerSettings.from_json(tmp_path / "old.json").toy is False


# --- 9. export --------------------------------------------------------------------------------------------------------


def test_export_respects_the_umask_and_its_tokenizer_loads_without_a_prompt(checker_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "exported"
    done = factlab_command("export", checker_dir, out, preexec_fn=lambda: os.umask(0o022))
    assert done.returncode == 0, done.stderr
    assert oct(out.stat().st_mode & 0o777) == oct(0o755)
    for path in out.rglob("*"):
        assert oct(path.stat().st_mode & 0o777) == oct(0o755 if path.is_dir() else 0o644), path
    load = (
        "import sys; from transformers import AutoTokenizer; "
        "print(AutoTokenizer.from_pretrained(sys.argv[1])('a b', 'c')['input_ids'])"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", load, str(out)], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300, check=False
    )
    assert loaded.returncode == 0, loaded.stderr
    assert "[y/N]" not in loaded.stdout + loaded.stderr and "trust_remote_code" not in loaded.stdout + loaded.stderr
    from transformers import AutoTokenizer

    expected = AutoTokenizer.from_pretrained(checker_dir / "encoder")("a b", "c")["input_ids"]
    assert json.loads(loaded.stdout.strip().splitlines()[-1]) == expected


# --- 6. help imports no heavy library ---------------------------------------------------------------------------------

HELP_CALLS = [
    pytest.param(words, id=" ".join(words) or "factlab")
    for words in [()]
    + [
        words
        for stage, (module, _) in STAGES.items()
        for words in [(stage,)] + [(stage, command) for command in literal_constant(module_file(module), "COMMAND_MODULES") or {}]
    ]
]


@pytest.mark.parametrize("words", HELP_CALLS)
def test_help_imports_no_heavy_library(words: tuple[str, ...]) -> None:
    """`factlab [<stage> [<command>]] --help` under `-X importtime`: it prints its help and imports none of `HEAVY`
    (a stage's help imports every command module of the stage)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "factlab", *words, "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage: factlab")
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not {name.split(".")[0] for name in imported} & set(HEAVY)


def test_import_factlab_imports_no_torch() -> None:
    probe = "import sys, factlab; print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:])))"
    done = subprocess.run([sys.executable, "-c", probe, *HEAVY], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_names_the_commands_list_without_their_modules_are_theirs() -> None:
    """The constants kept light for the commands' help equal those of the modules that use them."""
    from factlab.checker import check_command, inputs
    from factlab.data.adapters import frank as frank_adapter
    from factlab.metaeval.analyses.published import frank_command as frank

    assert frank.BASELINE_METRICS == frank_adapter.BASELINE_METRICS
    assert check_command.FORMATS == inputs.FORMATS

"""The aligner's OpenVINO runtime (factlab.models.openvino_aligner) against torch, the reference it is exported from:
the same word pieces as transformers' tokenizer, every head's reading within 1e-5 in fp32 on real pairs (QAGS-XSum,
tests/fixtures), a pair's answer independent of its batch, `factlab check` without importing torch, and the runtime
chosen where the checker folder has a graph and the work stays on the CPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_checker import fixture_examples
from tiny_aligner import save_tiny_checker

from factlab.checker.folder import CheckerSettings
from factlab.errors import FactlabError
from factlab.models.engine import EngineSettings, batch_token_budget, score_pairs
from factlab.models.loading import aligner_runtime, load_pair_scorer
from factlab.models.openvino_aligner import ONNX_FILE, OpenVinoAligner, PieceTokenizer, export_onnx
from factlab.runtime import load_tokenizer
from factlab.score.alignscore import AlignScoreSettings, score_benchmark

FIXTURES = Path(__file__).parent / "fixtures"
PAIRS = FIXTURES / "byo_qags_xsum_head.jsonl"  # six real QAGS-XSum (document, summary) pairs
SETTINGS = CheckerSettings(words_per_chunk=60, aggregation="mean", support_head="binary", threshold=0.5, precision="fp32")
FP32 = EngineSettings(precision="fp32", progress=False)


@pytest.fixture(autouse=True)
def compiled_cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """OpenVINO's compiled graphs go to a test's own cache folder, not the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def upstream() -> pd.DataFrame:
    return pd.read_json(PAIRS, lines=True)


@pytest.fixture(scope="module")
def checker_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = save_tiny_checker(tmp_path_factory.mktemp("checker"), SETTINGS)
    assert export_onnx(folder, folder / ONNX_FILE) == ["three_way", "binary", "unsupported", "error_type"]
    return folder


def test_piece_tokenizer_gives_transformers_pieces_and_offsets(checker_dir: Path, upstream: pd.DataFrame) -> None:
    texts = upstream["document"].tolist() + upstream["summary"].tolist() + ["Naïve café — 200million, PWNED2!"]
    mine, reference = PieceTokenizer(checker_dir / "encoder"), load_tokenizer()
    found = mine(texts, add_special_tokens=False, return_offsets_mapping=True)
    expected = reference(texts, add_special_tokens=False, return_offsets_mapping=True)
    assert found["input_ids"] == expected["input_ids"]
    assert [list(map(tuple, row)) for row in found["offset_mapping"]] == [
        list(map(tuple, row)) for row in expected["offset_mapping"]
    ]
    assert mine("a", "b") == {key: reference("a", "b")[key] for key in ("input_ids", "token_type_ids")}
    assert mine.pad_token_id == reference.pad_token_id


def test_fp32_readings_equal_torch_on_real_pairs(checker_dir: Path, upstream: pd.DataFrame) -> None:
    """Scores, sentence supports, best chunks, evidence, token supports and error types of the localising AlignScore."""
    examples, sentences = fixture_examples(upstream)
    settings = AlignScoreSettings(60, "reference", "mean", "binary", localise=True)
    graph = load_pair_scorer(str(checker_dir), device="cpu", runtime="openvino")
    torch_scorer = load_pair_scorer(str(checker_dir), device="cpu", runtime="torch")
    assert isinstance(graph, OpenVinoAligner) and graph.identity == f"{torch_scorer.identity}:openvino"
    mine, _ = score_benchmark(examples, sentences, graph, settings, FP32)
    reference, _ = score_benchmark(examples, sentences, torch_scorer, settings, FP32)
    np.testing.assert_allclose(mine["score"], reference["score"], atol=1e-5)
    for found, expected in zip(mine.to_dict("records"), reference.to_dict("records"), strict=True):
        assert [s["best_chunk"] for s in found["sentences"]] == [s["best_chunk"] for s in expected["sentences"]]
        for a, b in zip(found["sentences"], expected["sentences"], strict=True):
            assert [e["start"] for e in a["evidence"]] == [e["start"] for e in b["evidence"]]
            np.testing.assert_allclose(list(a["error_types"].values()), list(b["error_types"].values()), atol=1e-5)
        assert [(t["start"], t["end"]) for t in found["tokens"]] == [(t["start"], t["end"]) for t in expected["tokens"]]
        np.testing.assert_allclose([t["support"] for t in found["tokens"]], [t["support"] for t in expected["tokens"]], atol=1e-5)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_pair_scores_the_same_alone_and_among_others(checker_dir: Path, upstream: pd.DataFrame, precision: str) -> None:
    """Bit for bit: the engine pads a pair by its own length, and OpenVINO treats each row of a batch alike."""
    pairs = list(zip(upstream["document"], upstream["summary"], strict=True))
    graph = OpenVinoAligner(checker_dir)
    engine = EngineSettings(precision=precision, progress=False)
    together = score_pairs(graph, pairs, engine).scores
    alone = [score_pairs(OpenVinoAligner(checker_dir), [pair], engine).scores[0] for pair in pairs]
    assert together.tolist() == alone


def test_a_compiled_graph_from_the_cache_scores_as_a_fresh_compilation(
    checker_dir: Path, upstream: pd.DataFrame, compiled_cache_in_tmp: Path
) -> None:
    pairs = list(zip(upstream["document"], upstream["summary"], strict=True))
    engine = EngineSettings(precision="bf16", progress=False)
    fresh = score_pairs(OpenVinoAligner(checker_dir), pairs, engine).scores
    (cached_folder,) = (compiled_cache_in_tmp / "factlab" / "openvino").iterdir()
    assert any(cached_folder.iterdir()), "the compilation was not kept"
    from_cache = score_pairs(OpenVinoAligner(checker_dir), pairs, engine).scores
    assert from_cache.tolist() == fresh.tolist()


def test_openvino_batches_are_capped_and_torch_batches_are_not(checker_dir: Path) -> None:
    """OpenVINO's batches stay under its own cap whatever the engine allows; torch's follow the engine."""
    engine = EngineSettings(token_budget=16384, progress=False)
    assert batch_token_budget(OpenVinoAligner(checker_dir), engine) == OpenVinoAligner.max_batch_tokens == 4096
    assert batch_token_budget(OpenVinoAligner(checker_dir), EngineSettings(token_budget=1024)) == 1024
    assert batch_token_budget(load_pair_scorer(str(checker_dir), device="cpu", runtime="torch"), engine) == 16384


def test_check_on_openvino_never_imports_torch(checker_dir: Path, upstream: pd.DataFrame, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps({"source": s, "output": o}) + "\n" for s, o in zip(upstream["document"], upstream["summary"], strict=False)
        )
    )
    program = (
        "import sys, runpy; sys.argv = ['factlab', 'check', sys.argv[1], '-o', sys.argv[2], '--model', sys.argv[3], "
        "'--device', 'cpu', '-q']; from factlab.cli import main\n"
        "try:\n    main()\nexcept SystemExit as done:\n    assert not done.code, done.code\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'imported torch'"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(pairs), str(tmp_path / "out.jsonl"), str(checker_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(rows) == len(upstream) and all(0.0 <= row["score"] <= 1.0 for row in rows)


def test_runtime_is_openvino_where_the_folder_has_a_graph_and_the_work_stays_on_the_cpu(
    checker_dir: Path, tmp_path: Path
) -> None:
    plain = save_tiny_checker(tmp_path / "plain", SETTINGS)  # no graph
    assert aligner_runtime(str(checker_dir), "cpu", "auto") == "openvino"
    assert aligner_runtime(str(plain), "cpu", "auto") == "torch"
    assert aligner_runtime(str(checker_dir), "cuda", "auto") == "torch"
    assert aligner_runtime(str(checker_dir), "cpu", "torch") == "torch"
    with pytest.raises(FactlabError, match="runs on the CPU"):
        aligner_runtime(str(checker_dir), "cuda", "openvino")
    with pytest.raises(FactlabError, match="no model.onnx"):
        load_pair_scorer(str(plain), device="cpu", runtime="openvino")
    with pytest.raises(FactlabError, match="not one"):
        load_pair_scorer(str(tmp_path / "nli"), device="cpu", runtime="openvino")


def test_export_graph_keeps_a_graph_that_reads_like_torch(checker_dir: Path, upstream: pd.DataFrame, tmp_path: Path) -> None:
    """`factlab train export-graph` compares both runtimes on real pairs and records every head's difference."""
    folder = save_tiny_checker(tmp_path / "aligner", SETTINGS)
    data = tmp_path / "pairs.parquet"
    upstream.rename(columns={"id": "example_id", "document": "source", "summary": "output"}).to_parquet(data)
    command = [sys.executable, "-m", "factlab", "train", "export-graph", "--aligner", str(folder), "--parity-data", str(data)]
    command += ["--out", str(folder / ONNX_FILE), "--report", str(tmp_path / "report.json")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["parity_pairs"] == len(upstream)
    assert set(report["max_abs_difference"]) == {"three_way", "binary", "unsupported", "error_type"}
    assert all(value <= 1e-5 for value in report["max_abs_difference"].values())
    assert (folder / ONNX_FILE).is_file() and not list(folder.glob(".export-graph-*"))

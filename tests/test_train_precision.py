"""Training in bf16 autocast (`aligner.precision`, `qasem.precision`): the aligner and the parser train on real
pairs and sentences to within a small distance of fp32 training, repeat to the bit, keep fp32 weights, and record
the precision they used. On a CPU without native bf16 the same runs are emulated (slower)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import torch
from test_qasem_parser import TINY

from factlab.cli import main
from factlab.data.registry import get_spec
from factlab.io import write_parquet
from factlab.train.aligner import AlignerTrainSettings, train_aligner
from factlab.train.mixture import corpus_pairs
from factlab.train.qasem import TrainSettings, prepare_training, train_parser

TINY_ALIGNER = AlignerTrainSettings(encoder_layers=1, max_length=96, batch_pairs=8, validate_every=3, log_every=1, seed=4)


@pytest.fixture(scope="module")
def mixture(raw) -> pd.DataFrame:
    """48 real SICK pairs (3-way labels and relatedness: all three heads train), the first 16 for validation."""
    pairs = corpus_pairs("nli_sick", get_spec("nli_sick").build(raw).frame).head(48).reset_index(drop=True)
    return pairs.assign(split=["validation"] * 16 + ["train"] * 32)


def trained_aligner(mixture: pd.DataFrame, precision: str) -> tuple[dict[str, torch.Tensor], dict]:
    network, _, log = train_aligner(mixture, TINY_ALIGNER, device="cpu", precision=precision)
    return {name: value.detach().clone() for name, value in network.state_dict().items()}, log


def test_bf16_aligner_training_is_close_to_fp32_and_repeatable(mixture: pd.DataFrame) -> None:
    fp32, fp32_log = trained_aligner(mixture, "fp32")
    bf16, bf16_log = trained_aligner(mixture, "bf16")
    again, _ = trained_aligner(mixture, "bf16")
    assert (fp32_log["precision"], bf16_log["precision"]) == ("fp32", "bf16")
    assert all(value.dtype == torch.float32 for value in bf16.values() if value.is_floating_point())  # fp32 master weights
    assert all(torch.equal(bf16[name], again[name]) for name in bf16)  # deterministic on the CPU
    assert any(not torch.equal(bf16[name], fp32[name]) for name in bf16)  # bf16 did run
    # 4 steps apart from fp32 in the forward's rounding only: the losses and validation agree closely
    fp32_epoch, bf16_epoch = fp32_log["epochs"][-1], bf16_log["epochs"][-1]
    assert bf16_epoch["train_loss"] == pytest.approx(fp32_epoch["train_loss"], abs=0.02)
    assert bf16_epoch["validation_auc"] == pytest.approx(fp32_epoch["validation_auc"], abs=0.05)
    assert [point["step"] for point in bf16_log["curve"]] == [point["step"] for point in fp32_log["curve"]] == [3, 4]


def test_aligner_command_records_its_precision(mixture: pd.DataFrame, tmp_path: Path) -> None:
    write_parquet(mixture, tmp_path / "mixture.parquet")
    (tmp_path / "leakage.json").write_text(json.dumps({"leaking_pairs": 0}))
    settings = json.dumps({"encoder_layers": 1, "max_length": 64, "batch_pairs": 16, "validate_every": 10, "seed": 4})
    command = [
        "train", "aligner", "--mixture", str(tmp_path / "mixture.parquet"), "--leakage-report", str(tmp_path / "leakage.json"),
        "--settings", settings, "--threads", "1", "--device", "cpu", "--precision", "bf16",
        "--out-dir", str(tmp_path / "aligner"),
    ]  # fmt: skip
    assert main(command) == 0
    assert json.loads((tmp_path / "aligner" / "metrics.json").read_text())["precision"] == "bf16"
    assert json.loads((tmp_path / "aligner" / "training_log.json").read_text())["precision"] == "bf16"
    # dvc plots draws both AUC curves; the tiny mixture has no long premise of both labels: that column is empty
    curves = pd.read_csv(tmp_path / "aligner" / "curves.csv")
    assert curves["validation_auc"].notna().all() and curves["validation_auc_long"].isna().all()
    with pytest.raises(SystemExit):  # argparse refuses an unknown precision before anything is written
        main([*command[:-4], "--precision", "fp16", "--out-dir", str(tmp_path / "other")])
    assert not (tmp_path / "other").exists()


@pytest.mark.slow
def test_bf16_parser_training_is_close_to_fp32_and_repeatable(raw) -> None:
    settings = TrainSettings(epochs=2, max_train_sentences=8, validation_sentences=4, qasrl_gs_repeats=1, **TINY)
    data = prepare_training(get_spec("qasrl_gs").build(raw).frame, get_spec("qanom").build(raw).frame, settings)

    def trained(precision: str) -> tuple[dict[str, torch.Tensor], dict]:
        parser, log = train_parser(data, settings, device="cpu", precision=precision)
        return {name: value.detach().clone() for name, value in parser.network.state_dict().items()}, log

    (fp32, fp32_log), (bf16, bf16_log), (again, _) = trained("fp32"), trained("bf16"), trained("bf16")
    assert (fp32_log["precision"], bf16_log["precision"]) == ("fp32", "bf16")
    assert all(torch.equal(bf16[name], again[name]) for name in bf16)
    assert any(not torch.equal(bf16[name], fp32[name]) for name in bf16)
    for part in ("detection", "arguments", "templates"):
        assert bf16_log["epochs"][-1][f"loss_{part}"] == pytest.approx(fp32_log["epochs"][-1][f"loss_{part}"], rel=0.05)

"""The GPU path (config/gpu.yaml): scoring and aligner training on CUDA, in fp32 and in bf16, against the CPU's fp32.

Tolerances, stated once: fp32 on CUDA (TF32 off, torch's default for matrix products) matches the CPU to 1e-4
in a score and 1e-3 in a loss; bf16 autocast rounds every matrix product's inputs to 8 bits of mantissa, so
its scores stay within 0.02 and its losses within 0.05 of fp32 ones (the CPU's bf16 tests use the same bounds).
Training runs without dropout here: CUDA and the CPU draw different dropout masks from the same seed, which
moves two steps' losses apart by more than the fp32 bound, and the test is about the arithmetic.
Every test here skips without CUDA; CI has none, so they run on a machine with a GPU (`make gpu-check`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import factlab.train.aligner
from factlab.models.aligner import AlignerConfig, AlignerScorer, new_network
from factlab.models.engine import EngineSettings, reference_scores, score_pairs
from factlab.train.aligner import AlignerTrainSettings, train_aligner
from factlab.train.mixture import corpus_pairs

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

FIXTURES = Path(__file__).parent / "fixtures"
SCORE_FP32, SCORE_BF16, LOSS_FP32, LOSS_BF16 = 1e-4, 0.02, 1e-3, 0.05


@pytest.fixture(scope="module")
def qags_xsum() -> pd.DataFrame:
    """Six real QAGS-XSum articles, their summaries and the human faithfulness label (a fixture cut from the mirror)."""
    return pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")


@pytest.fixture(scope="module")
def pairs(qags_xsum: pd.DataFrame) -> list[tuple[str, str]]:
    documents, summaries = list(qags_xsum["document"].astype(str)), list(qags_xsum["summary"].astype(str))
    return list(zip(documents, summaries, strict=True)) + list(zip(summaries, summaries[1:] + summaries[:1], strict=True))


def scorers() -> tuple[AlignerScorer, AlignerScorer]:
    """The same small aligner (two MiniLM layers, seeded heads) on the CPU and on CUDA."""
    torch.manual_seed(0)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=2, max_length=256))
    cpu = AlignerScorer(network, tokenizer, device="cpu")
    copy, _ = new_network(AlignerConfig(encoder_layers=2, max_length=256))
    copy.load_state_dict(network.state_dict())
    return cpu, AlignerScorer(copy, tokenizer, device="cuda")


def test_cuda_scores_match_the_cpu_in_fp32_and_stay_near_in_bf16(pairs: list[tuple[str, str]]) -> None:
    cpu, cuda = scorers()
    assert cuda.device.type == "cuda" and next(cuda.network.parameters()).is_cuda
    reference = reference_scores(cpu, pairs, pad_to=256)  # AlignScore's loop, fp32, on the CPU
    fp32 = score_pairs(cuda, pairs, EngineSettings(progress=False))
    bf16 = score_pairs(cuda, pairs, EngineSettings(precision="bf16", progress=False))
    assert fp32.counts["pairs_premise_cut"] > 0  # long articles: cuts counted on the GPU path too
    assert np.max(np.abs(fp32.scores - reference)) <= SCORE_FP32
    assert 0 < np.max(np.abs(bf16.scores - reference)) <= SCORE_BF16  # > 0: it did run in bf16
    np.testing.assert_array_equal(fp32.premise_cut, score_pairs(cpu, pairs, EngineSettings(progress=False)).premise_cut)


def test_auto_precision_is_bf16_on_a_gpu_that_has_it(pairs: list[tuple[str, str]]) -> None:
    _, cuda = scorers()
    auto = score_pairs(cuda, pairs[:3], EngineSettings(precision="auto", progress=False))
    native = "bf16" if torch.cuda.is_bf16_supported() else "fp32"  # an older GPU falls back to fp32
    expected = score_pairs(cuda, pairs[:3], EngineSettings(precision=native, progress=False))
    np.testing.assert_array_equal(auto.scores, expected.scores)


def test_cuda_training_tracks_the_cpu(qags_xsum: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    def without_dropout(config: AlignerConfig) -> tuple[torch.nn.Module, object]:
        network, tokenizer = new_network(config)
        for module in network.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0  # BERT's attention reads its dropout's p too
        return network, tokenizer

    monkeypatch.setattr(factlab.train.aligner, "new_network", without_dropout)
    frame = pd.DataFrame(
        {
            "source": qags_xsum["document"],
            "output": qags_xsum["summary"],
            "label": (qags_xsum["faithful"] == "yes").astype(int),
            "doc_id": qags_xsum["id"],
        }
    )
    mixture = corpus_pairs("qags_xsum", frame).assign(split=["train"] * 4 + ["validation"] * 2)
    settings = AlignerTrainSettings(encoder_layers=2, max_length=256, batch_pairs=2, validate_every=100, log_every=1, seed=4)

    def final_loss(device: str, precision: str) -> tuple[float, dict[str, torch.Tensor]]:
        network, _, log = train_aligner(mixture, settings, device=device, precision=precision)
        assert log["device"].startswith(device) and log["precision"] == precision
        return log["epochs"][-1]["train_loss"], {name: value.detach().cpu() for name, value in network.state_dict().items()}

    cpu_loss, _ = final_loss("cpu", "fp32")
    cuda_loss, _ = final_loss("cuda", "fp32")
    bf16_loss, bf16_weights = final_loss("cuda", "bf16")
    assert cuda_loss == pytest.approx(cpu_loss, abs=LOSS_FP32)
    assert bf16_loss == pytest.approx(cpu_loss, abs=LOSS_BF16)
    assert all(value.dtype == torch.float32 for value in bf16_weights.values() if value.is_floating_point())  # fp32 masters

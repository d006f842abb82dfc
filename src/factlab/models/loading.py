"""Loading any model factlab reads as a pair scorer: the top of factlab.models, importing each adapter
(factlab.models.aligner, openvino_aligner, alignscore_checkpoint, yesno) while none of them imports it. Each is
imported where it is chosen: a checker read by OpenVINO never imports torch."""

from __future__ import annotations

from pathlib import Path

from factlab.errors import FactlabError
from factlab.models.aligner_folder import CONFIG_FILE
from factlab.models.protocols import PairScorer

RUNTIMES = ("auto", "torch", "openvino")
NVIDIA_DRIVER = Path("/proc/driver/nvidia/version")  # a CUDA GPU's driver, seen without importing torch


def aligner_runtime(model: str, device: str, runtime: str) -> str:
    """torch or openvino for a trained aligner folder: `auto` is OpenVINO where the folder holds its compiled graph
    (factlab.models.openvino_aligner.ONNX_FILE) and the work stays on the CPU (`device` cpu, or auto on a machine
    without an NVIDIA driver), torch otherwise."""
    from factlab.models.openvino_aligner import ONNX_FILE

    if runtime not in RUNTIMES:
        raise FactlabError(f"unknown runtime {runtime!r}; expected one of {RUNTIMES}")
    if runtime == "openvino" and device == "cuda":
        raise FactlabError("the OpenVINO runtime runs on the CPU: use runtime torch for device cuda")
    if runtime != "auto":
        return runtime
    on_cpu = device == "cpu" or (device == "auto" and not NVIDIA_DRIVER.exists())
    return "openvino" if on_cpu and (Path(model) / ONNX_FILE).is_file() else "torch"


def load_pair_scorer(
    model: str,
    *,
    device: str = "auto",
    entailment_label: str = "entailment",
    contradiction_label: str = "contradiction",
    runtime: str = "torch",
    threads: int = 0,
) -> PairScorer:
    """`model`: a trained aligner folder (has aligner.json), a released AlignScore checkpoint (a `.ckpt`
    file: factlab.models.alignscore_checkpoint), else a hub id / folder of an NLI classifier or of a
    seq2seq model (encoder-decoder config: asked SCALE's yes/no question, factlab.models.yesno).

    An aligner folder is read by torch, or by OpenVINO (`runtime`: `aligner_runtime`; `threads`: OpenVINO's, 0 its
    default). The aligner and a classifier are `DistributionScorer`s; `contradiction_label` only matters for a
    classifier's 3-way distribution. A yes/no model gives support only (the engine says so when a
    method asks it for distributions).
    """
    if (Path(model) / CONFIG_FILE).is_file():
        if aligner_runtime(model, device, runtime) == "openvino":
            from factlab.models.openvino_aligner import OpenVinoAligner

            return OpenVinoAligner(model, threads=threads)
        from factlab.models.aligner import DeferredAlignerScorer

        return DeferredAlignerScorer(model, device=device)
    if runtime == "openvino":
        raise FactlabError(f"the OpenVINO runtime reads a checker or aligner folder; {model} is not one (use runtime torch)")
    from factlab.models.aligner import HubNLIScorer
    from factlab.models.alignscore_checkpoint import AlignScoreCheckpointScorer, is_alignscore_checkpoint
    from factlab.models.yesno import HubYesNoScorer, is_seq2seq

    if is_alignscore_checkpoint(model):
        return AlignScoreCheckpointScorer(model, device=device)
    if is_seq2seq(model):
        return HubYesNoScorer(model, device=device)
    return HubNLIScorer(model, entailment_label, device=device, contradiction_label=contradiction_label)

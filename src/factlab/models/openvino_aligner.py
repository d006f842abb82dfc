"""A trained aligner without torch: its ONNX graph compiled by OpenVINO, the checker's runtime on a CPU.

`factlab check` spends seconds importing torch and transformers before it scores anything; this runtime imports
OpenVINO and `tokenizers` (a fraction of a second) and reads the same network:
- `export_onnx` writes the aligner's network as an ONNX graph (every head it has: 3-way, binary, token and type
  logits) from its trained weights; the checker folder carries it (`model.onnx`, factlab.checker.pipeline.package_command);
- `OpenVinoAligner` compiles that graph for the CPU, in fp32, or in bf16 where the CPU has native bf16 (precision
  `auto`, as the torch engine resolves it: factlab.models.engine.resolve_precision), and reads its heads as the
  torch aligner does: softmax over the 3-way, binary and type logits, sigmoid per token; here on the host in float64;
- `PieceTokenizer` is the aligner's own fast tokenizer (`encoder/tokenizer.json`) read with `tokenizers` alone,
  called the way the engine calls a transformers tokenizer.

It is a `DistributionScorer` and an aligner of `reads_aligner_heads` (factlab.models.protocols) whose batches are
numpy arrays (`runtime`): the engine, the support heads, the token memo and the token pass read it as they read
the torch aligner. A row's answer is the same whatever else its batch holds (the engine's padding depends on the
row alone and OpenVINO's kernels treat each row alike), so a pair scores the same alone or inside a file.
Its identity (the cache key) is the torch aligner's with `:openvino`: an OpenVINO score never answers for a torch
one, however close (fp32 agrees within the export's bar: factlab.train.graph_command).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factlab.errors import FactlabError
from factlab.io import atomic_path
from factlab.models.aligner_folder import ENCODER_DIR, aligner_config, aligner_identity, check_aligner_folder
from factlab.models.protocols import ALIGNED

ONNX_FILE = "model.onnx"
HEAD_OUTPUTS = ("three_way", "binary", "unsupported", "error_type")  # the graph's outputs, those the network has
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
ONNX_OPSET = 17
OPENVINO_PRECISION = {"fp32": "f32", "bf16": "bf16"}  # factlab's precision names -> OpenVINO's inference hint


@dataclass(frozen=True)
class HostDevice:
    """Where the compiled network runs: the CPU (the engine reads `device.type`, as of a torch device)."""

    type: str = "cpu"

    def __str__(self) -> str:
        return self.type


def export_onnx(model_dir: str | Path, out: str | Path) -> list[str]:
    """Write the trained aligner in `model_dir` as an ONNX graph with dynamic batch and length; returns its outputs.
    Needs torch (the trained network) and onnx: a pipeline step, never the checker's."""
    import torch

    from factlab.models.aligner import load_aligner, uses_token_types

    network, tokenizer = load_aligner(check_aligner_folder(model_dir))
    token_types = uses_token_types(tokenizer)
    outputs = [name for name in HEAD_OUTPUTS if getattr(network, name) is not None]  # AlignerNetwork's heads

    class Heads(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> tuple[Any, ...]:
            logits = self.network(input_ids, attention_mask, token_type_ids if token_types else None)
            return tuple(logits[name] for name in outputs)

    inputs = INPUTS if token_types else INPUTS[:2]
    example = tokenizer(["a premise of a few words"] * 2, ["its hypothesis"] * 2, return_tensors="pt")
    dynamic = {name: {0: "batch", 1: "pieces"} for name in inputs} | {
        name: ({0: "batch", 1: "pieces"} if name == "unsupported" else {0: "batch"}) for name in outputs
    }
    # The tracer warns that the attention mask's padding test and SDPA's causal flag become constants: both are
    # constant for this encoder (no causal mask, the mask as long as the ids), and export-graph's parity check reads
    # pairs of every length.
    with atomic_path(out) as tmp, torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Heads().eval(),
            tuple(example[name] for name in inputs),
            str(tmp),
            input_names=list(inputs),
            output_names=outputs,
            dynamic_axes=dynamic,
            opset_version=ONNX_OPSET,
            dynamo=False,  # the TorchScript exporter: one graph with dynamic axes, no onnxscript
        )
    return outputs


class PieceTokenizer:
    """A fast tokenizer's `tokenizer.json` read by `tokenizers`, answering the calls the engine and the token pass
    make of a transformers tokenizer: `tokenizer(texts, add_special_tokens=False[, return_offsets_mapping=True])`,
    `tokenizer(a, b)` (the pair template), `pad_token_id`, `model_input_names`."""

    def __init__(self, folder: str | Path) -> None:
        from tokenizers import Tokenizer

        folder = Path(folder)
        self.backend = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.backend.no_truncation()
        self.backend.no_padding()
        config = json.loads((folder / "tokenizer_config.json").read_text())
        pad = self.backend.token_to_id(str(config.get("pad_token", "[PAD]")))
        if pad is None:
            raise FactlabError(f"{folder}: the tokenizer has no pad token {config.get('pad_token')!r}")
        self.pad_token_id = int(pad)
        self.model_input_names = list(config.get("model_input_names") or INPUTS)

    def __call__(
        self,
        text: str | Sequence[str],
        text_pair: str | None = None,
        *,
        add_special_tokens: bool = True,
        return_offsets_mapping: bool = False,
    ) -> dict[str, Any]:
        if isinstance(text, str):
            encoding = self.backend.encode(text, text_pair, add_special_tokens=add_special_tokens)
            found = {"input_ids": encoding.ids, "token_type_ids": encoding.type_ids}
            return found | ({"offset_mapping": encoding.offsets} if return_offsets_mapping else {})
        encodings = self.backend.encode_batch(list(text), add_special_tokens=add_special_tokens)
        found = {"input_ids": [item.ids for item in encodings], "token_type_ids": [item.type_ids for item in encodings]}
        return found | ({"offset_mapping": [item.offsets for item in encodings]} if return_offsets_mapping else {})


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax, computed in float64 and returned as float32 (the torch aligner's probabilities' type)."""
    shifted = logits.astype(np.float64) - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return (exp / exp.sum(axis=-1, keepdims=True)).astype(np.float32)


def sigmoid(logits: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-logits.astype(np.float64)))).astype(np.float32)


def compiled_cache(graph: Path, identity: str) -> Path | None:
    """Where OpenVINO keeps this graph compiled for this CPU (`$XDG_CACHE_HOME/factlab/openvino/<key>`, else
    ~/.cache): a later start imports it instead of compiling again. The key names
    the weights, the graph file and its size and time, so a graph exported again never reads an old compilation.
    None where the folder cannot be made: then every start compiles."""
    stat = graph.stat()
    key = hashlib.sha256(f"{identity}\x1f{graph.resolve()}\x1f{stat.st_size}\x1f{stat.st_mtime_ns}".encode()).hexdigest()
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "factlab" / "openvino" / key[:32]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder


class OpenVinoAligner:
    """A checker folder's `model.onnx` compiled by OpenVINO, read as factlab.models.aligner.AlignerScorer reads
    its network (module docstring)."""

    runtime = "openvino"
    reads_aligner_heads = True  # factlab.models.protocols.reads_aligner_heads
    has_contradiction = True
    # OpenVINO holds a batch's attention matrices whole: batches of at most this many padded tokens keep a check of
    # long sources in far less memory than the engine's default budget, at the same speed (engine.batch_token_budget;
    # a row's answer does not depend on its batch).
    max_batch_tokens = 4096

    def __init__(self, model_dir: str | Path, threads: int = 0, graph: str | Path | None = None) -> None:
        folder = check_aligner_folder(model_dir)
        self.graph = Path(graph) if graph is not None else folder / ONNX_FILE  # `graph`: one being checked before it is kept
        if not self.graph.is_file():
            raise FactlabError(f"{folder} has no {ONNX_FILE}: export it with `factlab train export-graph` (or use torch)")
        config = aligner_config(folder)
        self.max_length = int(config.get("max_length", 512))
        self.has_token_head = bool(config.get("token_head", False))
        self.has_type_head = bool(config.get("type_head", False))
        self.tokenizer = PieceTokenizer(folder / ENCODER_DIR)
        self.device = HostDevice()
        self.identity = f"{aligner_identity(folder)}:openvino"
        self.threads = threads
        self.compiled: dict[str, Any] = {}  # precision -> (compiled model, infer request, input names, output names)
        self.active: str | None = None

    @property
    def distribution_identity(self) -> str:
        return self.identity  # the head fixes the classes: the weights name the distribution

    @contextlib.contextmanager
    def inference(self, precision: str) -> Iterator[None]:
        """Run the forwards inside in `precision` (fp32 or bf16: the engine resolves `auto` first)."""
        if precision not in OPENVINO_PRECISION:
            raise FactlabError(f"OpenVINO runs fp32 or bf16, not {precision!r}")
        if precision not in self.compiled:
            self.compiled[precision] = self.compile(precision)
        previous, self.active = self.active, precision
        try:
            yield
        finally:
            self.active = previous

    def compile(self, precision: str) -> tuple[Any, Any, list[str], list[str]]:
        import openvino

        settings: dict[str, Any] = {"INFERENCE_PRECISION_HINT": OPENVINO_PRECISION[precision]}
        if self.threads:
            settings["INFERENCE_NUM_THREADS"] = self.threads
        cache = compiled_cache(self.graph, self.identity)
        if cache is not None:
            settings["CACHE_DIR"] = str(cache)
        compiled = openvino.Core().compile_model(str(self.graph), "CPU", settings)
        inputs = [port.get_any_name() for port in compiled.inputs]
        outputs = [port.get_any_name() for port in compiled.outputs]
        return compiled, compiled.create_infer_request(), inputs, outputs

    def logits(
        self, input_ids: np.ndarray, attention_mask: np.ndarray, token_type_ids: np.ndarray | None
    ) -> dict[str, np.ndarray]:
        """Every head's logits of one batch (a copy: the request reuses its buffers)."""
        if self.active is None:  # outside the engine: fp32
            with self.inference("fp32"):
                return self.logits(input_ids, attention_mask, token_type_ids)
        _, request, inputs, outputs = self.compiled[self.active]
        given = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
        request.infer({name: given[name] for name in inputs})
        return {name: np.array(request.get_output_tensor(index).data) for index, name in enumerate(outputs)}

    def readings(
        self, input_ids: np.ndarray, attention_mask: np.ndarray, token_type_ids: np.ndarray | None
    ) -> dict[str, np.ndarray]:
        """The heads read as probabilities: three_way [batch, 3], binary [batch, 2], and where the network has them
        unsupported [batch, pieces] (P(unsupported) per cell) and error_type [batch, types]."""
        logits = self.logits(input_ids, attention_mask, token_type_ids)
        return {name: sigmoid(value) if name == "unsupported" else softmax(value) for name, value in logits.items()}

    def probabilities(self, input_ids: np.ndarray, attention_mask: np.ndarray, token_type_ids: np.ndarray | None) -> np.ndarray:
        return softmax(self.logits(input_ids, attention_mask, token_type_ids)["three_way"])

    def support(self, input_ids: np.ndarray, attention_mask: np.ndarray, token_type_ids: np.ndarray | None) -> np.ndarray:
        return self.probabilities(input_ids, attention_mask, token_type_ids)[:, ALIGNED]

    def sequence_and_tokens(
        self, input_ids: np.ndarray, attention_mask: np.ndarray, token_type_ids: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """factlab.models.aligner.AlignerScorer.sequence_and_tokens: 3-way, per-cell P(unsupported), types or None."""
        if not self.has_token_head:
            raise FactlabError(f"aligner {self.identity} has no token head: it was trained without `token_head`")
        readings = self.readings(input_ids, attention_mask, token_type_ids)
        return readings["three_way"], readings["unsupported"], readings.get("error_type")

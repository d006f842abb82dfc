"""`factlab train export-graph`: the trained aligner as an ONNX graph for OpenVINO, checked against torch.

The graph (`model.onnx` beside the weights: factlab.models.openvino_aligner) is what AlignScore's scoring and
`factlab check` run on a CPU without torch. Before it is kept, both runtimes read the same real pairs (the first
`--parity-pairs` (source, output) pairs of `--parity-data`, each cut to the model's length as the engine cuts it) in
fp32: every head's reading (3-way and binary support, each token's P(unsupported), the error-type distribution)
must agree within `TOLERANCE`, else the export fails and nothing is written. The report records the differences.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import positive_int, write_report
from factlab.errors import FactlabError

if TYPE_CHECKING:  # `factlab train --help` imports no numpy
    import numpy as np

LOG = logging.getLogger(__name__)
TOLERANCE = 1e-4  # fp32 readings of the two runtimes; the report records how closely they agree


def register(commands: Any) -> None:
    command = commands.add_parser("export-graph", help="the trained aligner as an ONNX graph, checked against torch")
    command.add_argument("--aligner", required=True, help="results/models/aligner")
    command.add_argument("--parity-data", required=True, help="results/data/<benchmark>.parquet: real pairs to compare on")
    command.add_argument("--parity-pairs", type=positive_int, default=64)
    command.add_argument("--threads", type=int, default=0)
    command.add_argument("--out", required=True, help="results/models/aligner/model.onnx")
    command.add_argument("--report", required=True, help="JSON: the readings' largest differences")
    command.set_defaults(func=run_export_graph)


def parity_pairs(data: str | Path, count: int) -> list[tuple[str, str]]:
    """The first `count` distinct (source, output) pairs of a benchmark, in example_id order."""
    import pandas as pd

    frame = pd.read_parquet(data, columns=["example_id", "source", "output"]).drop_duplicates("example_id")
    frame = frame.sort_values("example_id", kind="stable").head(count)
    return list(zip(frame["source"].astype(str), frame["output"].astype(str), strict=True))


def readings(scorer: Any, pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
    """Every head's fp32 reading of `pairs`, flattened: 3-way and binary support, and the token pass's outputs."""
    import numpy as np

    from factlab.models.engine import EngineSettings, score_pairs
    from factlab.models.support_heads import with_support_head
    from factlab.models.token_support import score_tokens

    engine = EngineSettings(precision="fp32", progress=False)
    found = {head: score_pairs(with_support_head(scorer, head), pairs, engine).scores for head in ("three_way", "binary")}
    if scorer.has_token_head:
        tokens = score_tokens(scorer, pairs, engine)
        found["unsupported"] = np.concatenate(tokens.unsupported)
        if tokens.error_types is not None:
            found["error_type"] = tokens.error_types.ravel()
    return found


def run_export_graph(args: argparse.Namespace) -> None:
    import numpy as np

    from factlab.models.loading import load_pair_scorer
    from factlab.models.openvino_aligner import ONNX_FILE, OpenVinoAligner, export_onnx

    out = Path(args.out)
    if out.name != ONNX_FILE or out.parent.resolve() != Path(args.aligner).resolve():
        raise FactlabError(f"--out must be {Path(args.aligner) / ONNX_FILE}: the runtime reads the graph beside the weights")
    pairs = parity_pairs(args.parity_data, args.parity_pairs)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".export-graph-") as folder:
        staged = Path(folder) / ONNX_FILE
        outputs = export_onnx(args.aligner, staged)
        torch_readings = readings(load_pair_scorer(args.aligner, device="cpu", runtime="torch"), pairs)
        graph_readings = readings(OpenVinoAligner(args.aligner, threads=args.threads, graph=staged), pairs)
        differences = {
            name: float(np.max(np.abs(torch_readings[name] - graph_readings[name]))) if len(torch_readings[name]) else 0.0
            for name in torch_readings
        }
        LOG.info("OpenVINO vs torch, fp32, %d pairs of %s: %s", len(pairs), args.parity_data, differences)
        failing = {name: value for name, value in differences.items() if not value <= TOLERANCE}
        if failing:
            raise FactlabError(f"the ONNX graph reads {args.aligner} differently from torch (> {TOLERANCE}): {failing}")
        staged.replace(out)
    report = {
        "graph": str(out),
        "outputs": outputs,
        "parity_data": args.parity_data,
        "parity_pairs": len(pairs),
        "precision": "fp32",
        "tolerance": TOLERANCE,
        "max_abs_difference": differences,
    }
    write_report(report, args.report)

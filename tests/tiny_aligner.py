"""A randomly initialised one-layer aligner (the MiniLM tokenizer, 256 word pieces) for scorer tests
that compare a scorer with a brute-force reference on the same model: fast, and seeded; and the tiny
BERT config that tests build other models from (an NLI classifier, an AlignScore checkpoint)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from transformers import BertConfig

from factlab.checker.folder import CARD_FILE, CheckerSettings
from factlab.models.aligner import AlignerConfig, AlignerNetwork, AlignerScorer, new_network, save_aligner
from factlab.runtime import load_tokenizer


def tiny_aligner(seed: int) -> AlignerScorer:
    torch.manual_seed(seed)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=256))
    return AlignerScorer(network, tokenizer, device="cpu")


def tiny_bert_config(**overrides: Any) -> BertConfig:
    """One 32-wide layer over the packaged MiniLM tokenizer's vocabulary."""
    settings = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64}
    return BertConfig(vocab_size=load_tokenizer().vocab_size, **{**settings, **overrides})


def save_tiny_checker(folder: Path, settings: CheckerSettings) -> Path:
    """A small seeded BERT (two 64-wide layers over MiniLM's vocabulary) with every head (token, type), saved as a
    checker folder read with `settings`: a trained checker's code paths, fast enough for hundreds of checks."""
    from transformers import BertModel

    torch.manual_seed(0)
    config = tiny_bert_config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
    config.initializer_range = 0.2  # token supports spread around a token threshold of 0.25: many spans
    network = AlignerNetwork(BertModel(config, add_pooling_layer=False), AlignerConfig(token_head=True, type_head=True))
    save_aligner(network.eval(), load_tokenizer(), folder, {"backbone": "tiny"})
    (folder / CARD_FILE).write_text(json.dumps(settings.as_json()))
    return folder


if __name__ == "__main__":
    # A user's `model:` scorer of family alignscore in CI's DAG run (make smoke-matrix): python tests/tiny_aligner.py DIR
    import sys

    torch.manual_seed(0)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=256))
    save_aligner(network.eval(), tokenizer, sys.argv[1], {"backbone": "tiny"})

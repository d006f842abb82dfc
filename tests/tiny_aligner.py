"""A randomly initialised one-layer aligner (the MiniLM tokenizer, 256 word pieces) for scorer tests
that compare a scorer with a brute-force reference on the same model: fast, and seeded; and the tiny
BERT config that tests build other models from (an NLI classifier, an AlignScore checkpoint)."""

from __future__ import annotations

from typing import Any

import torch
from transformers import BertConfig

from factlab.models.aligner import AlignerConfig, AlignerScorer, new_network
from factlab.runtime import load_tokenizer


def tiny_aligner(seed: int) -> AlignerScorer:
    torch.manual_seed(seed)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=256))
    return AlignerScorer(network, tokenizer, device="cpu")


def tiny_bert_config(**overrides: Any) -> BertConfig:
    """One 32-wide layer over the packaged MiniLM tokenizer's vocabulary."""
    settings = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64}
    return BertConfig(vocab_size=load_tokenizer().vocab_size, **{**settings, **overrides})

"""A randomly initialised one-layer aligner (the MiniLM tokenizer, 256 word pieces) for scorer tests
that compare a scorer with a brute-force reference on the same model: fast, and seeded."""

from __future__ import annotations

import torch

from factlab.models.aligner import AlignerConfig, AlignerScorer, new_network


def tiny_aligner(seed: int) -> AlignerScorer:
    torch.manual_seed(seed)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=256))
    return AlignerScorer(network, tokenizer, device="cpu")

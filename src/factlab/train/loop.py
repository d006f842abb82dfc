"""What every training loop here shares: seeding, length-bucketed batches, the optimiser and its schedule."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

import numpy as np
import torch

BUCKET_BATCHES = 50  # batches per length bucket: sorted within a bucket, shuffled across


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def bucketed_batches(lengths: Sequence[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar-length items: shuffle, sort within buckets, shuffle batches."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches = []
    bucket = batch_size * BUCKET_BATCHES
    for start in range(0, len(order), bucket):
        chunk = sorted(order[start : start + bucket], key=lambda index: lengths[index])
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


def linear_schedule(total_steps: int, warmup_fraction: float) -> Callable[[int], float]:
    warmup = max(1, math.ceil(total_steps * warmup_fraction))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    return factor


def optimizer_for(
    network: torch.nn.Module, encoder_lr: float, head_lr: float, weight_decay: float, eps: float = 1e-8
) -> torch.optim.Optimizer:
    """AdamW with one learning rate for the pre-trained `encoder.*` and one for the new heads; no decay
    on biases and norms. `eps` 1e-8 is AdamW's default."""
    groups: dict[tuple[bool, bool], list[torch.nn.Parameter]] = {}
    for name, parameter in network.named_parameters():
        if parameter.requires_grad:
            no_decay = name.endswith("bias") or "norm" in name.lower()
            groups.setdefault((name.startswith("encoder."), no_decay), []).append(parameter)
    return torch.optim.AdamW(
        [
            {
                "params": params,
                "lr": encoder_lr if is_encoder else head_lr,
                "weight_decay": 0.0 if no_decay else weight_decay,
            }
            for (is_encoder, no_decay), params in sorted(groups.items())
        ],
        eps=eps,
    )

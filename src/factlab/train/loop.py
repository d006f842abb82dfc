"""What every training loop here shares: seeding, length-bucketed batches, the learning-rate schedule."""

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

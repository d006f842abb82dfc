"""One inference path for every pair-scoring method (AlignScore today; SummaC, SCALE, QASemConsistency next).

A job hands over all its (premise, hypothesis) pairs at once. The engine
- deduplicates them (a chunk scored against the same sentence twice is scored once), and skips
  pairs already in the `PairCache` of the same model identity;
- tokenises each distinct premise and hypothesis once, and builds `[CLS] premise [SEP] hypothesis
  [SEP]` (the tokenizer's own special tokens) cutting the premise, then if need be the hypothesis,
  to `max_length`: every cut is counted and flagged per pair, never silent;
- sorts by length and packs batches under a token budget (batch rows x longest row), so padding
  is at most the length spread inside a batch, not everything to 512;
- runs under `torch.inference_mode`, bf16 autocast on CUDA when asked (fp32 on CPU).

AlignScore's reference loop (each pair alone, padded to 512) is `reference_scores`: the
throughput benchmark and the parity tests compare the two.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from factlab.errors import FactlabError
from factlab.io import write_parquet
from factlab.models.aligner import PairScorer

LOG = logging.getLogger(__name__)
PRECISIONS = ("fp32", "bf16")


@dataclass(frozen=True)
class EngineSettings:
    token_budget: int = 16384  # padded tokens per batch (rows x longest row)
    max_batch_pairs: int = 256
    precision: str = "fp32"  # fp32 | bf16 (CUDA only; CPU always runs fp32)
    progress: bool = True

    def __post_init__(self) -> None:
        if self.token_budget < 1 or self.max_batch_pairs < 1:
            raise FactlabError("engine token_budget and max_batch_pairs must be positive")
        if self.precision not in PRECISIONS:
            raise FactlabError(f"unknown precision {self.precision!r}; expected one of {PRECISIONS}")


@dataclass
class EncodedPair:
    input_ids: list[int]
    token_type_ids: list[int]
    premise_cut: int  # word pieces of the premise left out
    hypothesis_cut: int


@dataclass
class EngineResult:
    scores: np.ndarray  # one per input pair, in input order
    premise_cut: np.ndarray  # word pieces cut from each pair's premise (0 = whole)
    hypothesis_cut: np.ndarray
    counts: dict[str, int] = field(default_factory=dict)
    batch_shapes: list[tuple[int, int]] = field(default_factory=list)  # (rows, padded width) of each batch run


def pair_key(identity: str, premise: str, hypothesis: str) -> str:
    """Cache key: the model identity and both texts (separators that cannot occur in ordinary text)."""
    return hashlib.sha1(f"{identity}\x1f{premise}\x1e{hypothesis}".encode()).hexdigest()


class PairCache:
    """Scores by pair hash, shared by every scorer of a job that uses the same weights; optionally a parquet file."""

    def __init__(self) -> None:
        self.scores: dict[str, tuple[float, int, int]] = {}

    def get(self, key: str) -> tuple[float, int, int] | None:
        return self.scores.get(key)

    def put(self, key: str, score: float, premise_cut: int, hypothesis_cut: int) -> None:
        self.scores[key] = (score, premise_cut, hypothesis_cut)

    def save(self, path: str | Path) -> None:
        keys = sorted(self.scores)
        values = [self.scores[key] for key in keys]
        frame = pd.DataFrame(
            {
                "key": keys,
                "score": [v[0] for v in values],
                "premise_cut": [v[1] for v in values],
                "hypothesis_cut": [v[2] for v in values],
            }
        )
        write_parquet(frame, path)

    @classmethod
    def load(cls, path: str | Path) -> PairCache:
        cache = cls()
        if Path(path).is_file():
            frame = pd.read_parquet(path)
            for row in frame.itertuples(index=False):
                cache.put(row.key, float(row.score), int(row.premise_cut), int(row.hypothesis_cut))
        return cache


@dataclass(frozen=True)
class PairTemplate:
    """Where a tokenizer puts its special tokens around a pair (BERT: [CLS] a [SEP] b [SEP]; RoBERTa: <s> a </s></s> b </s>)."""

    prefix: list[int]
    middle: list[int]
    suffix: list[int]
    type_a: int  # token type of the prefix, premise and middle
    type_b: int  # token type of the hypothesis and suffix

    def build(self, premise_ids: list[int], hypothesis_ids: list[int]) -> tuple[list[int], list[int]]:
        ids = self.prefix + premise_ids + self.middle + hypothesis_ids + self.suffix
        first = len(self.prefix) + len(premise_ids) + len(self.middle)
        return ids, [self.type_a] * first + [self.type_b] * (len(ids) - first)


def pair_template(tokenizer: Any) -> PairTemplate:
    """Read the template off the tokenizer's encoding of a two-marker pair."""
    marker_a, marker_b = (tokenizer(text, add_special_tokens=False)["input_ids"] for text in ("a", "b"))
    encoded = tokenizer("a", "b")
    ids = list(encoded["input_ids"])
    if len(marker_a) != 1 or len(marker_b) != 1:
        raise FactlabError("cannot read the tokenizer's pair template")
    a = ids.index(marker_a[0])
    b = a + 1 + ids[a + 1 :].index(marker_b[0])
    types = list(encoded.get("token_type_ids") or [0] * len(ids))
    return PairTemplate(ids[:a], ids[a + 1 : b], ids[b + 1 :], types[a], types[b])


def encode_pairs(tokenizer: Any, pairs: Sequence[tuple[str, str]], max_length: int) -> list[EncodedPair]:
    """Token ids of each pair with the tokenizer's special tokens; premise cut first, then hypothesis."""
    premises = sorted({premise for premise, _ in pairs})
    hypotheses = sorted({hypothesis for _, hypothesis in pairs})
    premise_ids = dict(zip(premises, tokenizer(premises, add_special_tokens=False)["input_ids"], strict=True))
    hypothesis_ids = dict(zip(hypotheses, tokenizer(hypotheses, add_special_tokens=False)["input_ids"], strict=True))
    template = pair_template(tokenizer)
    room = max_length - len(template.prefix) - len(template.middle) - len(template.suffix)
    if room < 2:
        raise FactlabError(f"max_length {max_length} leaves no room for a pair")
    encoded = []
    for premise, hypothesis in pairs:
        p_ids, h_ids = premise_ids[premise], hypothesis_ids[hypothesis]
        hypothesis_cut = max(0, len(h_ids) - (room - 1))  # keep at least one premise piece
        h_ids = h_ids[: len(h_ids) - hypothesis_cut]
        premise_cut = max(0, len(p_ids) - (room - len(h_ids)))
        p_ids = p_ids[: len(p_ids) - premise_cut]
        input_ids, token_types = template.build(p_ids, h_ids)
        encoded.append(EncodedPair(input_ids, token_types, premise_cut, hypothesis_cut))
    return encoded


def length_batches(lengths: Sequence[int], token_budget: int, max_rows: int) -> list[list[int]]:
    """Indices sorted by length, cut into batches whose padded size (rows x longest) fits the budget."""
    order = sorted(range(len(lengths)), key=lambda index: (lengths[index], index))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        longest = lengths[index]  # ascending: the newest row is the longest
        if current and ((len(current) + 1) * longest > token_budget or len(current) >= max_rows):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def pad_batch(items: Sequence[EncodedPair], pad_id: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    width = max(len(item.input_ids) for item in items)
    ids = torch.full((len(items), width), pad_id, dtype=torch.long)
    types = torch.zeros((len(items), width), dtype=torch.long)
    mask = torch.zeros((len(items), width), dtype=torch.long)
    for row, item in enumerate(items):
        n = len(item.input_ids)
        ids[row, :n] = torch.tensor(item.input_ids)
        types[row, :n] = torch.tensor(item.token_type_ids)
        mask[row, :n] = 1
    return ids.to(device), mask.to(device), types.to(device)


def score_pairs(
    scorer: PairScorer,
    pairs: Sequence[tuple[str, str]],
    settings: EngineSettings | None = None,
    cache: PairCache | None = None,
    description: str = "pairs",
) -> EngineResult:
    """Support scores of every (premise, hypothesis) pair, in input order."""
    settings = settings or EngineSettings()
    cache = cache if cache is not None else PairCache()
    keys = [pair_key(scorer.identity, premise, hypothesis) for premise, hypothesis in pairs]
    todo: dict[str, tuple[str, str]] = {}
    for key, pair in zip(keys, pairs, strict=True):
        if cache.get(key) is None and key not in todo:
            todo[key] = pair
    todo_keys = list(todo)
    encoded = encode_pairs(scorer.tokenizer, [todo[key] for key in todo_keys], scorer.max_length) if todo else []
    batches = length_batches([len(item.input_ids) for item in encoded], settings.token_budget, settings.max_batch_pairs)
    autocast = settings.precision == "bf16" and scorer.device.type == "cuda"
    shapes: list[tuple[int, int]] = []
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
        for batch in tqdm(batches, desc=description, unit="batch", disable=not settings.progress, mininterval=10):
            items = [encoded[index] for index in batch]
            ids, mask, types = pad_batch(items, scorer.tokenizer.pad_token_id, scorer.device)
            shapes.append(tuple(ids.shape))
            support = scorer.support(ids, mask, types).float().cpu().numpy()
            for index, value in zip(batch, support, strict=True):
                item = encoded[index]
                cache.put(todo_keys[index], float(value), item.premise_cut, item.hypothesis_cut)
    values = [cache.get(key) for key in keys]
    scores = np.array([value[0] for value in values], dtype=np.float64)
    premise_cut = np.array([value[1] for value in values], dtype=np.int64)
    hypothesis_cut = np.array([value[2] for value in values], dtype=np.int64)
    real_tokens = sum(len(item.input_ids) for item in encoded)
    counts = {
        "pairs": len(pairs),
        "distinct_pairs_scored": len(encoded),
        "pairs_from_cache_or_duplicates": len(pairs) - len(encoded),
        "batches": len(batches),
        "tokens": real_tokens,
        "padded_tokens": sum(rows * width for rows, width in shapes),
        "pairs_premise_cut": int((premise_cut > 0).sum()),
        "pairs_hypothesis_cut": int((hypothesis_cut > 0).sum()),
        "premise_pieces_cut": int(premise_cut.sum()),
    }
    if counts["pairs_premise_cut"] or counts["pairs_hypothesis_cut"]:
        LOG.warning(
            "%s: %d pairs had their premise cut to fit %d word pieces",
            description,
            counts["pairs_premise_cut"],
            scorer.max_length,
        )
    return EngineResult(scores, premise_cut, hypothesis_cut, counts, shapes)


def reference_scores(scorer: PairScorer, pairs: Iterable[tuple[str, str]], pad_to: int = 512) -> np.ndarray:
    """AlignScore's reference inference loop: each pair alone, tokenised with truncation and padded to `pad_to`."""
    tokenizer = scorer.tokenizer
    out = []
    with torch.inference_mode():
        for premise, hypothesis in pairs:
            batch = tokenizer(
                [premise],
                [hypothesis],
                truncation="only_first",
                max_length=min(pad_to, scorer.max_length),
                padding="max_length",
                return_tensors="pt",
            ).to(scorer.device)
            types = batch.get("token_type_ids")
            out.append(float(scorer.support(batch["input_ids"], batch["attention_mask"], types)[0]))
    return np.array(out, dtype=np.float64)

"""SummaC-Conv (Laban et al., 2022): a learned 1-D convolution over histograms of the NLI matrix.

Per output sentence, the P(entail) of every source unit (the SummaC-ZS matrix, same pairs and
engine) is binned into a histogram; a linear layer over the bins (SummaC's "convolution": one
filter sliding over sentences) gives a sentence score, the mean over sentences feeds a 2-way linear
classifier, and the example score is its P(consistent). The head is trained by `factlab train
summac-conv` on document-level pairs of the aligner's training mixture (leakage-filtered against
every evaluated benchmark), never on a benchmark that is reported.

Variants (`variant`): `reference` keeps SummaC's quirks — only the first 10 output sentences are
read (`n_rows = 10`; the rest are dropped and counted) and the ZS caps on source units apply;
`corrected` reads every sentence and every unit.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from factlab.errors import ConfigError, FactlabError
from factlab.models.engine import EngineSettings, PairCache, score_pair_distributions
from factlab.models.protocols import DistributionScorer
from factlab.score.summac import ENTAIL, SummaCSettings, summac_pairs

LOG = logging.getLogger(__name__)
# SummaC's `percentile` edges: percentiles of P(entail) over many summaries (23 bins).
PERCENTILE_EDGES = (
    0.0, 0.01, 0.02, 0.03, 0.04, 0.07, 0.13, 0.37, 0.90, 0.91, 0.92, 0.93, 0.94,
    0.95, 0.955, 0.96, 0.965, 0.97, 0.975, 0.98, 0.985, 0.99, 0.995, 1.0,
)  # fmt: skip
BINNINGS = ("percentile", "even50")
REFERENCE_ROWS = 10  # SummaC-Conv's `n_rows`: sentences past the tenth are never read


@dataclass(frozen=True)
class ConvSettings:
    granularity: str = "sentence"
    bins: str = "percentile"
    variant: str = "corrected"

    def __post_init__(self) -> None:
        if self.bins not in BINNINGS:
            raise ConfigError(f"unknown summac_conv bins {self.bins!r}; expected one of {BINNINGS}")
        SummaCSettings(granularity=self.granularity, variant=self.variant)  # validates both

    @property
    def zs_settings(self) -> SummaCSettings:
        return SummaCSettings(granularity=self.granularity, variant=self.variant, use_contradiction=False)


def bin_edges(bins: str) -> np.ndarray:
    if bins == "percentile":
        return np.asarray(PERCENTILE_EDGES)
    return np.linspace(0.0, 1.0, 51)


def sentence_histograms(entail: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """[sentences, units] P(entail) -> [sentences, bins] counts (numpy's histogram on [0, 1])."""
    return np.stack([np.histogram(row, bins=edges, range=(0.0, 1.0))[0] for row in entail]).astype(np.float32)


class ConvHead(torch.nn.Module):
    """SummaC-Conv's trainable part: bins -> sentence score, mean over sentences -> 2-way logits."""

    def __init__(self, n_bins: int) -> None:
        super().__init__()
        self.sentence = torch.nn.Linear(n_bins, 1)
        self.final = torch.nn.Linear(3, 2)  # SummaC feeds [agg, agg, agg]; kept so reference weights would load

    def forward(self, histograms: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """histograms [examples, rows, bins], mask [examples, rows] -> (logits [examples, 2], sentence scores)."""
        per_sentence = self.sentence(histograms).squeeze(-1)
        counts = mask.sum(dim=1).clamp(min=1)
        mean = (per_sentence * mask).sum(dim=1) / counts  # an example without sentences gets 0, as SummaC
        return self.final(mean.unsqueeze(1).expand(-1, 3)), per_sentence


@dataclass
class Images:
    """Per example: P(entail) [sentences, units] and the unit spans, from one engine pass."""

    example_ids: list[str]
    entail: list[np.ndarray]
    sentences: list[list[dict[str, Any]]]
    counts: dict[str, int]


def entailment_images(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    scorer: DistributionScorer,
    settings: ConvSettings,
    engine: EngineSettings | None = None,
    cache: PairCache | None = None,
) -> Images:
    job = summac_pairs(examples, sentences, settings.zs_settings)
    result = score_pair_distributions(scorer, job.pairs, engine, cache, description="summac-conv pairs")
    images = Images([], [], [], dict(result.counts))
    dropped_rows = 0
    for block in job.blocks:
        units = job.units[block.doc_id]
        size = len(block.sentences) * len(units)
        probs = result.probabilities[block.offset : block.offset + size].reshape(len(block.sentences), len(units), 3)
        kept = block.sentences
        if settings.variant == "reference" and len(kept) > REFERENCE_ROWS:
            dropped_rows += len(kept) - REFERENCE_ROWS
            kept, probs = kept[:REFERENCE_ROWS], probs[:REFERENCE_ROWS]
        images.example_ids.append(block.example_id)
        images.entail.append(probs[..., ENTAIL] if len(units) else np.zeros((0, 0)))
        images.sentences.append(
            [{"sentence_index": i, "sentence": s.text, "start": s.start, "end": s.end} for i, s in kept] if len(units) else []
        )
    images.counts.update(
        examples=len(images.example_ids),
        output_sentences_past_row_cap=dropped_rows,
        dropped_short_source_units=job.report.short_dropped,
        dropped_source_units_over_cap=job.report.over_cap_dropped,
        examples_without_units_or_sentences=sum(not rows for rows in images.sentences),
    )
    for name in ("output_sentences_past_row_cap", "dropped_source_units_over_cap", "examples_without_units_or_sentences"):
        if images.counts[name]:
            LOG.warning("summac-conv: %s = %d", name, images.counts[name])
    return images


def histogram_batch(images: Images, edges: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded [examples, max sentences, bins] histograms and their sentence mask."""
    rows = max([len(entail) for entail in images.entail] + [1])
    histograms = np.zeros((len(images.entail), rows, len(edges) - 1), dtype=np.float32)
    mask = np.zeros((len(images.entail), rows), dtype=np.float32)
    for index, entail in enumerate(images.entail):
        if entail.size:
            histograms[index, : len(entail)] = sentence_histograms(entail, edges)
            mask[index, : len(entail)] = 1.0
    return torch.from_numpy(histograms), torch.from_numpy(mask)


def train_head(
    histograms: torch.Tensor,
    mask: torch.Tensor,
    labels: np.ndarray,
    *,
    epochs: int,
    learning_rate: float,
    seed: int,
) -> tuple[ConvHead, list[float]]:
    """Full-batch Adam on cross-entropy; deterministic on CPU for a fixed seed. Returns the head and loss curve."""
    torch.manual_seed(seed)
    head = ConvHead(histograms.shape[-1])
    optimiser = torch.optim.Adam(head.parameters(), lr=learning_rate)
    targets = torch.as_tensor(labels, dtype=torch.long)
    losses = []
    for _ in range(epochs):
        optimiser.zero_grad()
        loss = torch.nn.functional.cross_entropy(head(histograms, mask)[0], targets)
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
    return head, losses


def head_scores(head: ConvHead, histograms: torch.Tensor, mask: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """P(consistent) per example and the per-sentence linear scores."""
    with torch.no_grad():
        logits, per_sentence = head(histograms, mask)
    return torch.softmax(logits, dim=-1)[:, 1].numpy(), per_sentence.numpy()


# One metadata key holding sorted JSON: safetensors writes its metadata map in a random order, so two
# keys gave the same head different bytes from one save to the next (caught by make rerun-identical).
HEAD_METADATA = "conv"


def save_head(head: ConvHead, settings: ConvSettings, path: str | Path) -> None:
    from safetensors.torch import save_file

    conv = json.dumps({"bins": settings.bins, "granularity": settings.granularity}, sort_keys=True)
    save_file(head.state_dict(), str(path), metadata={HEAD_METADATA: conv})


def load_head(path: str | Path, settings: ConvSettings) -> ConvHead:
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(str(path), framework="pt") as handle:
        metadata = json.loads((handle.metadata() or {}).get(HEAD_METADATA, "{}"))
    if metadata.get("bins") != settings.bins:
        raise FactlabError(f"{path}: head trained with bins {metadata.get('bins')!r}, settings ask for {settings.bins!r}")
    head = ConvHead(len(bin_edges(settings.bins)) - 1)
    head.load_state_dict(load_file(str(path)))
    return head.eval()


def score_summac_conv(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    scorer: DistributionScorer,
    settings: ConvSettings,
    engine: EngineSettings | None,
    head: ConvHead,
    cache: PairCache | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """SummaC-Conv of every example; the detail keeps each sentence's linear score (higher = better supported).

    `cache`: pairs already scored with the same weights (SummaC-ZS's job of this shard)."""
    images = entailment_images(examples, sentences, scorer, settings, engine, cache)
    histograms, mask = histogram_batch(images, bin_edges(settings.bins))
    scores, per_sentence = head_scores(head, histograms, mask)
    records = []
    for row, (example_id, detail) in enumerate(zip(images.example_ids, images.sentences, strict=True)):
        for position, item in enumerate(detail):
            item["support"] = float(per_sentence[row, position])
            item["max_entail"] = float(images.entail[row][position].max())
        records.append({"example_id": example_id, "score": float(scores[row]), "n_sentences": len(detail), "sentences": detail})
    return pd.DataFrame.from_records(records), images.counts

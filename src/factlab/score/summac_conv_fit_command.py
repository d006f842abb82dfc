"""`factlab score summac-conv-fit`: SummaC-Conv's head fitted on held-out document-level training pairs.

The NLI matrices come from the trained aligner, so the head is fitted on mixture pairs the aligner
never trained on (the mixture's `validation` split): on its own training pairs the matrix would be
over-confident and the head would learn the wrong histogram shapes. Those pairs are split again by
source document (seeded) into the head's train and validation parts. It is a score-stage step (like
AlignScore's chunk tuning): it fits a scorer's read-out on top of the trained model. Only pairs whose premise has
at least `min_source_words` words are used: Conv reads a histogram over source sentences.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_device_arguments, settings_from_json
from factlab.errors import ConfigError, FactlabError
from factlab.io import write_json, write_text
from factlab.runtime import set_threads

if TYPE_CHECKING:
    import pandas as pd

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConvTrainSettings:
    origins: list[str] = field(default_factory=list)  # mixture origins used (prefix match)
    min_source_words: int = 80
    validation_fraction: float = 0.3
    epochs: int = 300
    learning_rate: float = 0.05
    seed: int = 2022

    def __post_init__(self) -> None:
        if not self.origins:
            raise ConfigError("summac_conv training needs at least one mixture origin")
        if not 0.0 < self.validation_fraction < 1.0:
            raise ConfigError(f"summac_conv validation_fraction must be in (0, 1), got {self.validation_fraction}")


def register(commands: Any) -> None:
    train = commands.add_parser("summac-conv-fit", help="fit SummaC-Conv's histogram head on held-out mixture pairs")
    train.add_argument("--mixture", required=True, help="results/models/aligner_data/mixture.parquet")
    train.add_argument("--model", required=True, help="the aligner folder (or an NLI classifier)")
    train.add_argument("--entailment-label", required=True)
    train.add_argument("--contradiction-label", required=True)
    train.add_argument("--conv-settings", required=True, help="JSON of score.summac_conv (granularity, bins, variant)")
    train.add_argument("--settings", required=True, help="JSON of score.summac_conv.train")
    train.add_argument("--threads", type=int, required=True)
    add_device_arguments(train, precision=False)
    train.add_argument("--out-dir", required=True)
    train.set_defaults(func=run_train_conv)


def head_examples(mixture: pd.DataFrame, settings: ConvTrainSettings) -> pd.DataFrame:
    """Held-out document-level pairs as a benchmark-like frame with a seeded `part` (train | validation)."""
    import numpy as np
    import pandas as pd

    chosen = mixture[
        (mixture["split"] == "validation")
        & mixture["label_bin"].notna()
        & mixture["origin"].astype(str).str.startswith(tuple(settings.origins))
        & (mixture["text_a"].str.split().str.len() >= settings.min_source_words)
    ].reset_index(drop=True)
    if chosen["label_bin"].nunique() < 2:
        raise FactlabError(f"summac-conv training: {len(chosen)} held-out pairs of {settings.origins} lack both labels")
    doc_ids = [hashlib.sha256(text.encode()).hexdigest()[:16] for text in chosen["text_a"]]
    draws = {doc: np.random.default_rng([settings.seed, int(doc, 16) % 2**32]).random() for doc in set(doc_ids)}
    return pd.DataFrame(
        {
            "example_id": [f"conv-{i}" for i in range(len(chosen))],
            "doc_id": doc_ids,
            "source": chosen["text_a"].astype(str),
            "output": chosen["text_b"].astype(str),
            "label": chosen["label_bin"].astype(int),
            "origin": chosen["origin"].astype(str),
            "part": ["validation" if draws[doc] < settings.validation_fraction else "train" for doc in doc_ids],
        }
    )


def run_train_conv(args: argparse.Namespace) -> None:
    import numpy as np
    import pandas as pd
    import torch
    from sklearn.metrics import roc_auc_score

    from factlab.models.loading import load_pair_scorer
    from factlab.preprocess.benchmark import sentence_units
    from factlab.score.summac_conv import (
        ConvSettings,
        bin_edges,
        entailment_images,
        head_scores,
        histogram_batch,
        save_head,
        train_head,
    )

    set_threads(args.threads)
    conv = settings_from_json(args.conv_settings, ConvSettings, "score.summac_conv")
    settings = settings_from_json(args.settings, ConvTrainSettings, "score.summac_conv.train")
    examples = head_examples(pd.read_parquet(args.mixture), settings)
    sentences, _ = sentence_units(examples, "summac_conv_training")
    scorer = load_pair_scorer(
        args.model, device=args.device, entailment_label=args.entailment_label, contradiction_label=args.contradiction_label
    )
    images = entailment_images(examples, sentences, scorer, conv)
    histograms, mask = histogram_batch(images, bin_edges(conv.bins))
    train = (examples["part"] == "train").to_numpy()
    labels = examples["label"].to_numpy()
    rows = torch.from_numpy(train)
    fit = {"epochs": settings.epochs, "learning_rate": settings.learning_rate, "seed": settings.seed}
    head, losses = train_head(histograms[rows], mask[rows], labels[train], **fit)
    # The zero-shot reading of the same matrices (mean over sentences of max P(entail)): what the head must beat.
    zero_shot = np.array([entail.max(axis=1).mean() if entail.size else 0.0 for entail in images.entail])
    scores, _ = head_scores(head, histograms, mask)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_head(head, conv, out / "head.safetensors")
    write_text(pd.DataFrame({"epoch": range(1, len(losses) + 1), "train_loss": losses}).to_csv(index=False), out / "curves.csv")
    metrics = {
        "train_pairs": int(train.sum()),
        "validation_pairs": int((~train).sum()),
        "train_auc": round(float(roc_auc_score(labels[train], scores[train])), 4),
        "validation_auc": round(float(roc_auc_score(labels[~train], scores[~train])), 4),
        "validation_auc_zero_shot": round(float(roc_auc_score(labels[~train], zero_shot[~train])), 4),
        "final_train_loss": round(losses[-1], 4),
        "model": scorer.identity,
        "origins": examples.groupby("origin").size().to_dict(),
        "settings": json.loads(args.settings),
        "conv": json.loads(args.conv_settings),
        **{key: value for key, value in images.counts.items() if isinstance(value, int)},
    }
    write_json(metrics, out / "metrics.json")
    LOG.info("summac-conv head: validation AUC %.3f on %d pairs", metrics["validation_auc"], metrics["validation_pairs"])

"""Training the alignment model (factlab.models.aligner) on the training mixture (factlab.train.mixture).

Each mixture row trains the heads its labels allow: `label_3way` the 3-way head (cross-entropy),
`label_bin` the binary head, `score` the regression head (MSE of its sigmoid), as AlignScore does;
rows of 3-way corpora train the binary head too (aligned vs not). Pairs are encoded by the scoring
engine's own `encode_pairs` (premise cut first, every cut counted), batched by length (shuffled
buckets), padded per batch. AdamW (AlignScore's eps and weight decay; the encoder and the freshly
initialised heads get separate learning rates), linear warm-up and decay, gradient clipping, fixed
seeds: deterministic on CPU for a fixed thread count.

Validation (the mixture's `validation` split, never an evaluated benchmark) runs every
`validate_every` steps and after each epoch: loss, 3-way accuracy, ROC AUC of P(aligned) against
the binary label overall and on long premises (>= `long_premise_words` words) — the curve a
model tuned only on short pairs would fail — and, with the token head, the token AUC of P(unsupported)
over the labelled hypothesis pieces. The rows form `curves.csv` (`dvc plots`).

The token head (`token_head`) reads each hypothesis word piece's last hidden state: binary
cross-entropy against the row's `unsupported_spans` (factlab.train.token_labels; rows without token
labels train the sequence heads only), weighted by `token_loss_weight`, on the same forward pass. The
error-type head (`type_head`) reads the pooled encoding: cross-entropy against the synthetic errors'
FRANK categories (`error_type`), weighted by `type_loss_weight`; validation adds its accuracy.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from sklearn.metrics import roc_auc_score
from torch.nn import functional as F

from factlab.errors import FactlabError
from factlab.models.aligner import ERROR_TYPES, AlignerConfig, AlignerNetwork, AlignerScorer, new_network
from factlab.models.engine import (
    EncodedPairs,
    EngineSettings,
    autocast_context,
    encode_pairs,
    pad_batch,
    resolve_precision,
    score_pairs,
)
from factlab.models.token_support import hypothesis_piece_offsets, score_tokens
from factlab.runtime import select_device
from factlab.train import token_labels
from factlab.train.loop import bucketed_batches, linear_schedule, optimizer_for, seed_everything

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class AlignerTrainSettings:
    backbone: str = "minilm"  # minilm (packaged, offline) | hub id | local folder
    encoder_layers: int = 0  # 0 = all
    max_length: int = 512
    epochs: int = 1
    batch_pairs: int = 16
    encoder_lr: float = 5e-5
    head_lr: float = 5e-4
    weight_decay: float = 0.1  # AlignScore
    adam_eps: float = 1e-6  # AlignScore
    warmup_fraction: float = 0.06
    grad_clip: float = 1.0
    seed: int = 2022
    validate_every: int = 500  # steps between validation points on the curve
    long_premise_words: int = 200
    log_every: int = 50
    token_head: bool = True  # the token head (P(unsupported) per hypothesis token), trained on `unsupported_spans`
    token_loss_weight: float = 1.0  # its binary cross-entropy's weight beside the sequence heads' losses
    type_head: bool = True  # the error-type head (FRANK's categories, ERROR_TYPES), trained on the synthetic errors' types
    type_loss_weight: float = 0.5

    def __post_init__(self) -> None:
        positive = ("max_length", "epochs", "batch_pairs", "validate_every", "log_every", "long_premise_words")
        bad = [name for name in positive if getattr(self, name) < 1]
        bad += [
            name
            for name in (
                "encoder_layers",
                "weight_decay",
                "grad_clip",
                "encoder_lr",
                "head_lr",
                "token_loss_weight",
                "type_loss_weight",
            )
            if getattr(self, name) < 0
        ]
        if not 0 <= self.warmup_fraction < 1:
            bad.append("warmup_fraction")
        if bad:
            raise FactlabError(f"invalid aligner training settings: {bad}")


@dataclass
class Targets:
    three_way: torch.Tensor  # class or -100
    binary: torch.Tensor  # class or -100
    regression: torch.Tensor  # value or nan
    tokens: list[np.ndarray] | None = None  # per row: each kept hypothesis piece 1 unsupported / 0 / -100 unknown
    error_type: torch.Tensor | None = None  # index into ERROR_TYPES or -100


def token_targets(frame: pd.DataFrame, tokenizer: Any, encoded: EncodedPairs) -> list[np.ndarray]:
    """Each row's kept hypothesis pieces labelled from its `unsupported_spans` (factlab.train.token_labels)."""
    texts = frame["text_b"].astype(str).tolist()
    distinct = sorted(set(texts))
    offsets = dict(zip(distinct, hypothesis_piece_offsets(tokenizer, distinct), strict=True))
    spans = frame["unsupported_spans"] if "unsupported_spans" in frame else pd.Series([None] * len(frame))
    return [
        token_labels.piece_labels(offsets[text][:kept], token_labels.loads(value))
        for text, value, kept in zip(texts, spans, encoded.hypothesis_kept.tolist(), strict=True)
    ]


def batch_token_labels(targets: Targets, encoded: EncodedPairs, rows: list[int], width: int) -> torch.Tensor:
    """[rows, width] labels of a padded batch: the hypothesis pieces' own, -100 at every other position."""
    labels = np.full((len(rows), width), -100, dtype=np.int64)
    assert targets.tokens is not None
    template = encoded.template
    for line, row in enumerate(rows):
        start = len(template.prefix) + int(encoded.premise_kept[row]) + len(template.middle)
        values = targets.tokens[row]
        labels[line, start : start + len(values)] = values
    return torch.from_numpy(labels)


def error_type_targets(frame: pd.DataFrame) -> torch.Tensor:
    """Each row's error type as an index of ERROR_TYPES, -100 where it has none."""
    index = {name: position for position, name in enumerate(ERROR_TYPES)}
    values = frame["error_type"] if "error_type" in frame else pd.Series([None] * len(frame))
    return torch.tensor([index.get(value, -100) if isinstance(value, str) else -100 for value in values], dtype=torch.int64)


def row_targets(frame: pd.DataFrame) -> Targets:
    three = frame["label_3way"].astype("Int64")
    binary = frame["label_bin"].astype("Int64")
    # 3-way rows train the binary head too: aligned (0) -> 1, neutral/contradiction -> 0.
    binary = binary.where(binary.notna(), (three == 0).astype("Int64").where(three.notna()))
    score = pd.to_numeric(frame["score"], errors="coerce").astype("float64")
    return Targets(
        torch.tensor(three.fillna(-100).to_numpy(dtype=np.int64)),
        torch.tensor(binary.fillna(-100).to_numpy(dtype=np.int64)),
        torch.tensor(score.fillna(np.nan).to_numpy(dtype=np.float32)),
    )


def batch_loss(
    outputs: dict[str, torch.Tensor],
    targets: Targets,
    rows: list[int],
    token_labels_batch: torch.Tensor | None = None,
    token_weight: float = 1.0,
    type_weight: float = 1.0,
) -> tuple[torch.Tensor, dict[str, float]]:
    index = torch.tensor(rows)
    three, binary, regression = targets.three_way[index], targets.binary[index], targets.regression[index]
    losses: dict[str, torch.Tensor] = {}
    if (three >= 0).any():
        losses["three_way"] = F.cross_entropy(outputs["three_way"], three, ignore_index=-100)
    if (binary >= 0).any():
        losses["binary"] = F.cross_entropy(outputs["binary"], binary, ignore_index=-100)
    known = ~torch.isnan(regression)
    if known.any():
        losses["regression"] = F.mse_loss(torch.sigmoid(outputs["regression"][known]), regression[known])
    if token_labels_batch is not None and "unsupported" in outputs and (token_labels_batch >= 0).any():
        labelled = token_labels_batch >= 0
        losses["tokens"] = token_weight * F.binary_cross_entropy_with_logits(
            outputs["unsupported"][labelled], token_labels_batch[labelled].float()
        )
    if targets.error_type is not None and "error_type" in outputs:
        types = targets.error_type[index]
        if (types >= 0).any():
            losses["error_type"] = type_weight * F.cross_entropy(outputs["error_type"], types, ignore_index=-100)
    total = sum(losses.values(), torch.zeros(()))
    return total, {name: float(value.detach()) for name, value in losses.items()}


def validate(
    scorer: AlignerScorer, frame: pd.DataFrame, settings: AlignerTrainSettings, precision: str = "fp32"
) -> dict[str, float]:
    """P(aligned) on the validation pairs: AUC against the binary label (all / long premises), 3-way accuracy."""
    if frame.empty:
        return {}
    was_training = scorer.network.training
    scorer.network.eval()
    result = score_pairs(
        scorer, list(zip(frame["text_a"], frame["text_b"], strict=True)), EngineSettings(precision=precision, progress=False)
    )
    token_metrics = validate_tokens(scorer, frame, precision) if scorer.has_token_head and "unsupported_spans" in frame else {}
    scorer.network.train(was_training)
    targets = row_targets(frame)
    labels = targets.binary.numpy()
    known = labels >= 0
    metrics: dict[str, float] = {"validation_pairs": float(len(frame))}
    if known.any() and len(set(labels[known])) == 2:
        metrics["validation_auc"] = float(roc_auc_score(labels[known], result.scores[known]))
    long_premise = frame["text_a"].str.split().str.len().to_numpy() >= settings.long_premise_words
    long_known = known & long_premise
    if long_known.any() and len(set(labels[long_known])) == 2:
        metrics["validation_auc_long"] = float(roc_auc_score(labels[long_known], result.scores[long_known]))
        metrics["validation_pairs_long"] = float(long_known.sum())
    metrics.update(token_metrics)
    three = targets.three_way.numpy()
    if (three >= 0).any():
        # P(aligned) alone cannot give the 3-way class: accuracy of "aligned iff P > 0.5" on 3-way rows
        predicted_aligned = result.scores[three >= 0] > 0.5
        metrics["validation_three_way_aligned_accuracy"] = float(np.mean(predicted_aligned == (three[three >= 0] == 0)))
    return metrics


def validate_tokens(scorer: AlignerScorer, frame: pd.DataFrame, precision: str) -> dict[str, float]:
    """ROC AUC of the token head's P(unsupported) over the labelled hypothesis pieces of the validation pairs."""
    labelled = frame[frame["unsupported_spans"].notna()]
    if labelled.empty:
        return {}
    settings = EngineSettings(precision=precision, progress=False)
    result = score_tokens(scorer, list(zip(labelled["text_a"], labelled["text_b"], strict=True)), settings)
    labels = [
        token_labels.piece_labels(offsets, token_labels.loads(value))
        for offsets, value in zip(result.offsets, labelled["unsupported_spans"], strict=True)
    ]
    gold, predicted = np.concatenate(labels), np.concatenate(result.unsupported)
    metrics: dict[str, float] = {}
    if len(set(gold.tolist())) >= 2:
        metrics |= {"validation_token_auc": float(roc_auc_score(gold, predicted)), "validation_tokens": float(len(gold))}
    types = error_type_targets(labelled).numpy()
    if result.error_types is not None and (types >= 0).any():
        typed = types >= 0
        metrics["validation_error_type_accuracy"] = float(np.mean(result.error_types[typed].argmax(axis=1) == types[typed]))
        metrics["validation_error_typed_pairs"] = float(typed.sum())
    return metrics


def train_aligner(
    mixture: pd.DataFrame, settings: AlignerTrainSettings, device: str = "auto", precision: str = "fp32"
) -> tuple[AlignerNetwork, Any, dict[str, Any]]:
    """Train on the `train` rows, validate on the `validation` rows; returns network, tokenizer and the log.
    `precision` (fp32 | bf16 | auto, factlab.models.engine.resolve_precision): bf16 autocasts the forward
    passes, training's and validation's; the weights, gradients and AdamW's state stay fp32."""
    seed_everything(settings.seed)
    started = time.perf_counter()
    rng = random.Random(settings.seed)
    train = mixture[mixture["split"] == "train"].reset_index(drop=True)
    validation = mixture[mixture["split"] == "validation"].reset_index(drop=True)
    if train.empty:
        raise FactlabError("the training mixture has no rows with split 'train'")
    config = AlignerConfig(
        backbone=settings.backbone,
        encoder_layers=settings.encoder_layers,
        max_length=settings.max_length,
        token_head=settings.token_head,
        type_head=settings.type_head,
    )
    network, tokenizer = new_network(config)
    target_device = select_device(device)
    precision = resolve_precision(precision, target_device)
    scorer = AlignerScorer(network, tokenizer, device=device)
    network.train()
    encoded = encode_pairs(tokenizer, list(zip(train["text_a"], train["text_b"], strict=True)), settings.max_length)
    targets = row_targets(train)
    if settings.token_head:
        targets.tokens = token_targets(train, tokenizer, encoded)
    if settings.type_head:
        targets.error_type = error_type_targets(train)
    counts = Counter(
        train_pairs=len(train),
        validation_pairs=len(validation),
        train_pairs_premise_cut=int((encoded.premise_cut > 0).sum()),
        train_pairs_hypothesis_cut=int((encoded.hypothesis_cut > 0).sum()),
        train_tokens=int(encoded.lengths.sum()),
    )
    if targets.error_type is not None:
        counts["train_pairs_error_typed"] = int((targets.error_type >= 0).sum())
    if targets.tokens is not None:
        counts["train_pairs_token_labelled"] = sum(int((labels >= 0).any()) for labels in targets.tokens)
        counts["train_pieces_unsupported"] = sum(int((labels == 1).sum()) for labels in targets.tokens)
        counts["train_pieces_supported"] = sum(int((labels == 0).sum()) for labels in targets.tokens)
    optimizer = optimizer_for(network, settings.encoder_lr, settings.head_lr, settings.weight_decay, eps=settings.adam_eps)
    steps_per_epoch = math.ceil(len(train) / settings.batch_pairs)
    total_steps = steps_per_epoch * settings.epochs
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, linear_schedule(total_steps, settings.warmup_fraction))
    LOG.info(
        "training the aligner on %d pairs (%d steps/epoch, %d epochs), device %s, %s",
        len(train),
        steps_per_epoch,
        settings.epochs,
        target_device,
        precision,
    )
    curve: list[dict[str, Any]] = []
    epochs = []
    step = 0
    for epoch in range(1, settings.epochs + 1):
        epoch_start = time.perf_counter()
        totals: Counter[str] = Counter()
        batches = bucketed_batches(encoded.lengths.tolist(), settings.batch_pairs, rng)
        for number, rows in enumerate(batches, start=1):
            ids, mask, types = pad_batch(encoded, rows, tokenizer.pad_token_id, target_device)
            with autocast_context(precision, target_device):
                outputs = network(ids, mask, types if scorer.token_types else None)
            # the losses in fp32 on the CPU, whatever the forward's precision and device (no-ops for fp32 on a CPU)
            labels = batch_token_labels(targets, encoded, rows, ids.shape[1]) if targets.tokens is not None else None
            outputs = {k: v.float().cpu() for k, v in outputs.items()}
            loss, parts = batch_loss(outputs, targets, rows, labels, settings.token_loss_weight, settings.type_loss_weight)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for p in network.parameters() if p.requires_grad], settings.grad_clip)
            optimizer.step()
            scheduler.step()
            step += 1
            totals.update({"loss": float(loss.detach()), **parts})
            if number % settings.log_every == 0 or number == len(batches):
                LOG.info(
                    "epoch %d step %d/%d loss %.4f (%.0fs)",
                    epoch,
                    number,
                    len(batches),
                    totals["loss"] / number,
                    time.perf_counter() - epoch_start,
                )
            if step % settings.validate_every == 0 and number != len(batches):
                point = {
                    "epoch": epoch,
                    "step": step,
                    "train_loss": totals["loss"] / number,
                    **validate(scorer, validation, settings, precision),
                }
                LOG.info("validation at step %d: %s", step, {k: round(v, 4) for k, v in point.items() if isinstance(v, float)})
                curve.append(point)
        record = {
            "epoch": epoch,
            "step": step,
            "train_loss": totals["loss"] / len(batches),
            **{f"train_loss_{name}": value / len(batches) for name, value in totals.items() if name != "loss"},
            "train_seconds": time.perf_counter() - epoch_start,
        }
        record.update(validate(scorer, validation, settings, precision))
        LOG.info("epoch %d: %s", epoch, {k: round(v, 4) if isinstance(v, float) else v for k, v in record.items()})
        epochs.append(record)
        curve.append(
            {
                key: record[key]
                for key in record
                if key == "epoch" or key == "step" or key == "train_loss" or key.startswith("validation_")
            }
        )
    network.eval()
    log = {
        "settings": asdict(settings),
        "epochs": epochs,
        "curve": curve,
        "counts": dict(counts),
        "origins": train["origin"].value_counts().sort_index().to_dict(),
        "device": str(target_device),
        "precision": precision,
        "torch_threads": torch.get_num_threads(),
        "total_seconds": time.perf_counter() - started,
        "trainable_parameters": sum(p.numel() for p in network.parameters() if p.requires_grad),
    }
    return network, tokenizer, log

"""The MiniLM sentence encoder of the embedding baselines, and how they batch texts through a model.

all-MiniLM-L6-v2 sentence embeddings (the packaged offline copy: `factlab.runtime`), mean-pooled
over the word pieces of each sentence ([CLS] and [SEP] included, as sentence-transformers pools)
and L2-normalised. Texts are cut to `max_length` word pieces (256: the model's `max_seq_length`),
every cut counted. `factlab.score.embedding_cosine` and `factlab.score.openie_triples` embed with
it; `BatchSettings` also batches BERTScore's texts (`factlab.score.bertscore`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from factlab.batching import length_batches
from factlab.errors import ConfigError
from factlab.runtime import load_encoder, load_tokenizer, select_device

if TYPE_CHECKING:  # torch loads inside the encoder functions: importing the settings never needs it
    import torch

LOG = logging.getLogger(__name__)
MODEL_MAX_LENGTH = 512  # MiniLM's position embeddings: word pieces per text, [CLS] and [SEP] included


@dataclass(frozen=True)
class BatchSettings:
    """How texts are batched through a model: sorted by length, so that padding stays small."""

    token_budget: int = 16384  # padded word pieces per batch (rows x longest row)
    max_batch: int = 256  # rows per batch
    max_padding: float = 0.25  # padding per batch at most this share of its real word pieces
    progress: bool = True

    def __post_init__(self) -> None:
        if self.token_budget < MODEL_MAX_LENGTH or self.max_batch < 1:
            raise ConfigError(
                f"token_budget ({self.token_budget}) must hold one row of {MODEL_MAX_LENGTH} word pieces "
                f"and max_batch ({self.max_batch}) must be positive"
            )
        if self.max_padding < 0:
            raise ConfigError(f"max_padding must be >= 0, got {self.max_padding}")


def batched(settings: BatchSettings, lengths: Sequence[int]) -> list[list[int]]:
    """`lengths`' indices in batches of similar length within `settings` (padding also capped: a stricter cut than
    the engine's, since on CPU every padded position costs as much as a real one)."""
    return length_batches(lengths, settings.max_batch, settings.token_budget, settings.max_padding)


@dataclass(frozen=True)
class EncoderSettings(BatchSettings):
    """The MiniLM sentence encoder of the embedding scorers."""

    max_length: int = 256  # word pieces with [CLS]/[SEP]; all-MiniLM-L6-v2's max_seq_length

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 3 <= self.max_length <= MODEL_MAX_LENGTH:
            raise ConfigError(f"encoder max_length must be in 3..{MODEL_MAX_LENGTH}, got {self.max_length}")


@dataclass
class SentenceEncoder:
    model: Any  # a transformers BertModel (factlab.runtime.load_encoder)
    tokenizer: Any
    device: torch.device
    precision: str = "fp32"  # fp32 | bf16 (resolved: factlab.models.engine.resolve_precision)


def load_sentence_encoder(device: str = "auto", layers: int | None = None, precision: str = "fp32") -> SentenceEncoder:
    """The packaged all-MiniLM-L6-v2 (no download) on `device`; `layers` keeps the first n (tests);
    `precision` as the engine's (fp32 | bf16 | auto: bf16 where the device computes it natively)."""
    from factlab.models.engine import resolve_precision

    torch_device = select_device(device)
    model = load_encoder(pretrained=True, layers=layers).to(torch_device).eval()
    return SentenceEncoder(model, load_tokenizer(), torch_device, resolve_precision(precision, torch_device))


@dataclass
class Embedded:
    vectors: np.ndarray  # (texts, dim), float32, unit length
    pieces_cut: np.ndarray  # word pieces left out of each text (0 = whole)
    counts: dict[str, int]


def embed_texts(
    texts: Sequence[str], encoder: SentenceEncoder, settings: EncoderSettings, description: str = "embeddings"
) -> Embedded:
    """Mean-pooled, L2-normalised embeddings of `texts` (distinct: the caller deduplicates), in order.

    Each text becomes `[CLS] pieces [SEP]` cut to `max_length` (counted); batches hold texts of
    similar length (`factlab.batching.length_batches`).
    """
    import torch

    dim = int(encoder.model.config.hidden_size)
    tokenizer = encoder.tokenizer
    pieces = tokenizer(list(texts), add_special_tokens=False)["input_ids"] if texts else []
    room = settings.max_length - 2
    cut = np.array([max(0, len(ids) - room) for ids in pieces], dtype=np.int64)
    ids = [[tokenizer.cls_token_id, *p[:room], tokenizer.sep_token_id] for p in pieces]
    batches = batched(settings, [len(row) for row in ids])
    vectors = np.zeros((len(texts), dim), np.float32)
    padded = 0
    from factlab.models.engine import inference_context

    with inference_context(encoder.precision, encoder.device):
        for batch in tqdm(batches, desc=description, unit="batch", disable=not settings.progress, mininterval=10):
            width = max(len(ids[i]) for i in batch)
            padded += width * len(batch)
            input_ids = torch.full((len(batch), width), tokenizer.pad_token_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, index in enumerate(batch):
                input_ids[row, : len(ids[index])] = torch.tensor(ids[index])
                mask[row, : len(ids[index])] = 1
            input_ids, mask = input_ids.to(encoder.device), mask.to(encoder.device)
            hidden = encoder.model(input_ids=input_ids, attention_mask=mask).last_hidden_state.float()
            weights = mask.unsqueeze(-1).float()
            pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1)
            vectors[batch] = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
    tokens = sum(len(row) for row in ids)
    counts = {
        "texts_embedded": len(texts),
        "texts_cut": int((cut > 0).sum()),
        "pieces_cut": int(cut.sum()),
        "batches": len(batches),
        "tokens": tokens,
        "padding_tokens": padded - tokens,
    }
    if counts["texts_cut"]:
        LOG.warning(
            "%s: %d texts cut to %d word pieces (%d pieces left out)",
            description,
            counts["texts_cut"],
            settings.max_length,
            counts["pieces_cut"],
        )
    return Embedded(vectors, cut, counts)


def embed_distinct(
    texts: Sequence[str], encoder: SentenceEncoder, settings: EncoderSettings, description: str
) -> tuple[dict[str, int], Embedded]:
    """Each distinct text embedded once: text -> row of the embedding matrix."""
    rows = {text: row for row, text in enumerate(dict.fromkeys(texts))}
    return rows, embed_texts(list(rows), encoder, settings, description)

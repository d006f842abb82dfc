"""The alignment model: an encoder read as a cross-encoder with AlignScore's three heads.

AlignScore (Zha et al., 2023) puts three linear heads on one pooled encoding of `text_a [SEP]
text_b`: 3-way (aligned / neutral / contradict), binary (aligned / not) and regression (STS-style
relatedness in [0, 1]). They are trained jointly (factlab.train.aligner); at inference the
support of `text_b` by `text_a` is P(aligned) of the 3-way head.

Backbones: `minilm` is the packaged all-MiniLM-L6-v2 (offline, factlab.runtime); anything else is a
hub id or a local folder that `transformers.AutoModel` reads (online users, or an offline copy of
all-mpnet-base-v2 assembled from its PyPI parts). Pooling is the attention-masked mean of the last
hidden states, the pooling these sentence encoders were pre-trained with.

A trained aligner is a folder: `model.safetensors` (encoder + heads), `aligner.json` (factlab's
config and the training settings) and `encoder/` (the encoder's config and tokenizer), so that
loading it needs neither the hub nor the packaged weights.

`HubNLIScorer` is the other `PairScorer` here: any hub or local sequence classifier trained for NLI
(e.g. a DeBERTa-MNLI checkpoint) whose entailment label is declared; support = P(entailment). A
seq2seq model is a third (`factlab.models.yesno`: SCALE's yes/no prompt, support = P("Yes")), and a
released AlignScore `.ckpt` a fourth (`factlab.models.alignscore_checkpoint`).

Both are also `DistributionScorer`s: `probabilities` gives the whole 3-way distribution in the order
`DISTRIBUTION_CLASSES` (entail, neutral, contradict), what SummaC reads (it subtracts the largest
P(contradict)). The aligner's 3-way head is already in that order. A classifier's labels are mapped
by name: the declared entailment label, the declared contradiction label, and neutral = the
probability mass of every other label. A 2-label classifier (entailment / not entailment) has no
contradiction class: P(contradict) = 0 and the whole non-entailment mass is neutral, since such a
model cannot tell a contradiction from a lack of support; `has_contradiction` says so, so that a
method which subtracts contradiction can report that it reduces to P(entail) there.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import nn

from factlab.errors import FactlabError
from factlab.io import atomic_path, write_json
from factlab.models.aligner_folder import (
    CONFIG_FILE,
    ENCODER_DIR,
    WEIGHTS_FILE,
    aligner_config,
    aligner_identity,
    check_aligner_folder,
)
from factlab.models.protocols import ALIGNED, ERROR_TYPES
from factlab.runtime import load_encoder, load_tokenizer, select_device

PACKAGED_BACKBONE = "minilm"
HEADS = ("three_way", "binary", "regression")


@dataclass(frozen=True)
class AlignerConfig:
    backbone: str = PACKAGED_BACKBONE  # minilm | hub id | local folder
    encoder_layers: int = 0  # 0 = all; fewer = the first n layers (smoke, tests)
    max_length: int = 512  # word pieces per pair; longer premises are cut (counted by the engine)
    dropout: float = 0.1
    # A fourth head on every token's last hidden state: P(this hypothesis token is unsupported by the premise).
    # Off in folders saved before the head existed (their aligner.json lacks the key), so they still load.
    token_head: bool = False
    type_head: bool = False  # a fifth head on the pooled encoding: which kind of error (ERROR_TYPES) an unsupported pair makes


def load_backbone(backbone: str, *, pretrained: bool = True, layers: int = 0) -> tuple[nn.Module, Any]:
    """(encoder without pooler, fast tokenizer) for a backbone name, hub id or folder."""
    if backbone == PACKAGED_BACKBONE:
        return load_encoder(pretrained=pretrained, layers=layers or None), load_tokenizer()
    from transformers import AutoConfig, AutoTokenizer

    try:
        config = AutoConfig.from_pretrained(backbone)
        tokenizer = AutoTokenizer.from_pretrained(backbone)
        encoder = auto_encoder(config, backbone if pretrained else None)
    except OSError as error:  # hub unreachable, no such folder
        raise FactlabError(f"cannot load aligner backbone {backbone!r}: {error}".splitlines()[0]) from error
    if layers:
        truncate_layers(encoder, layers)
    return encoder, tokenizer


def auto_encoder(config: Any, weights_from: str | None = None) -> nn.Module:
    """The bare encoder (no pooler: the heads pool) from a config, with weights when `weights_from` is given."""
    from transformers import AutoModel

    try:  # BERT-like models build a pooler unless told not to; others (DeBERTa) have no such argument
        if weights_from is None:
            return AutoModel.from_config(config, add_pooling_layer=False)
        return AutoModel.from_pretrained(weights_from, config=config, add_pooling_layer=False)
    except TypeError:
        return AutoModel.from_config(config) if weights_from is None else AutoModel.from_pretrained(weights_from, config=config)


def truncate_layers(encoder: nn.Module, layers: int) -> None:
    stack = encoder.encoder.layer  # BERT, RoBERTa, MPNet, DeBERTa all keep their layers here
    if not 1 <= layers <= len(stack):
        raise FactlabError(f"encoder layers must be in 1..{len(stack)}, got {layers}")
    encoder.encoder.layer = stack[:layers]
    encoder.config.num_hidden_layers = layers


class AlignerNetwork(nn.Module):
    def __init__(self, encoder: nn.Module, config: AlignerConfig) -> None:
        super().__init__()
        self.encoder = encoder
        self.config = config
        hidden = encoder.config.hidden_size
        self.dropout = nn.Dropout(config.dropout)
        self.three_way = nn.Linear(hidden, 3)
        self.binary = nn.Linear(hidden, 2)
        self.regression = nn.Linear(hidden, 1)
        self.unsupported = nn.Linear(hidden, 1) if config.token_head else None
        self.error_type = nn.Linear(hidden, len(ERROR_TYPES)) if config.type_head else None

    def hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        return self.encoder(**inputs).last_hidden_state

    def pooled(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        return mean_pool(self.hidden(input_ids, attention_mask, token_type_ids), attention_mask)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        """The heads' logits; with the token head, `unsupported`: [batch, tokens] logits of P(unsupported), read
        only at the hypothesis's tokens (the premise's and the special tokens' are never trained)."""
        hidden = self.hidden(input_ids, attention_mask, token_type_ids)
        pooled = self.dropout(mean_pool(hidden, attention_mask))
        logits = {
            "three_way": self.three_way(pooled),
            "binary": self.binary(pooled),
            "regression": self.regression(pooled).squeeze(-1),
        }
        if self.unsupported is not None:
            logits["unsupported"] = self.unsupported(self.dropout(hidden)).squeeze(-1)
        if self.error_type is not None:
            logits["error_type"] = self.error_type(pooled)
        return logits


def token_probabilities(logits: torch.Tensor) -> torch.Tensor:
    """P(unsupported) of every cell of a [batch, tokens] logit matrix, one row at a time. An elementwise op over the
    whole matrix computes its last (cells mod the vector width) cells on the scalar path, which rounds differently
    from the vector one (1 ulp), so a row's values would depend on where in its batch it lies; row by row, every row
    takes the same path."""
    return torch.cat([torch.sigmoid(row.float()) for row in logits.split(1)])


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)


def new_network(config: AlignerConfig) -> tuple[AlignerNetwork, Any]:
    encoder, tokenizer = load_backbone(config.backbone, pretrained=True, layers=config.encoder_layers)
    return AlignerNetwork(encoder, config), tokenizer


def uses_token_types(tokenizer: Any) -> bool:
    return "token_type_ids" in tokenizer.model_input_names


class AlignerScorer:
    """A trained aligner as a `PairScorer`: support = P(aligned) of the 3-way head; probabilities = its softmax."""

    has_contradiction = True
    reads_aligner_heads = True  # factlab.models.protocols.reads_aligner_heads
    runtime = "torch"

    def __init__(self, network: AlignerNetwork, tokenizer: Any, device: str = "auto", identity: str = "") -> None:
        self.device = select_device(device)
        self.network = network.to(self.device).eval()
        self.tokenizer = tokenizer
        self.max_length = network.config.max_length
        self.identity = identity or f"untrained:{network.config.backbone}"
        self.token_types = uses_token_types(tokenizer)

    def support(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        return self.probabilities(input_ids, attention_mask, token_type_ids)[:, ALIGNED]

    def probabilities(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None
    ) -> torch.Tensor:
        logits = self.network(input_ids, attention_mask, token_type_ids if self.token_types else None)["three_way"]
        return torch.softmax(logits.float(), dim=-1)  # the head's order is DISTRIBUTION_CLASSES'

    @property
    def distribution_identity(self) -> str:
        return self.identity  # the head fixes the classes: the weights name the distribution

    @property
    def has_token_head(self) -> bool:
        return self.network.unsupported is not None

    @property
    def has_type_head(self) -> bool:
        return self.network.error_type is not None

    def sequence_and_tokens(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """One forward: the 3-way probabilities [batch, 3], every token's P(unsupported) [batch, tokens] and, with
        the type head, the error-type distribution [batch, len(ERROR_TYPES)] (None without)."""
        if not self.has_token_head:
            raise FactlabError(f"aligner {self.identity} has no token head: it was trained without `token_head`")
        logits = self.network(input_ids, attention_mask, token_type_ids if self.token_types else None)
        types = torch.softmax(logits["error_type"].float(), dim=-1) if "error_type" in logits else None
        return torch.softmax(logits["three_way"].float(), dim=-1), token_probabilities(logits["unsupported"]), types


class DeferredAlignerScorer(AlignerScorer):
    """A trained aligner whose network and tokenizer load when first used. A job whose pairs all come from a
    `PairCache` (SummaC-Conv after SummaC-ZS) then never imports transformers nor deserialises the weights, which
    is most of such a job's time. Its identity (the cache key) is the weights file's hash, read at
    once. Jobs that read the tokenizer up front (a support head's view, SCALE's windows) load at that point."""

    LOADED_ATTRIBUTES = ("network", "tokenizer", "max_length", "token_types")  # what AlignerScorer.__init__ sets

    def __init__(self, model_dir: str | Path, device: str = "auto") -> None:  # AlignerScorer.__init__ runs at the load
        check_aligner_folder(model_dir)
        self.model_dir = Path(model_dir)
        self.device = select_device(device)
        self.identity = aligner_identity(model_dir)
        self.load_seconds = 0.0  # spent loading at first use (a job's report counts it as loading, not scoring)

    @property
    def loaded(self) -> bool:
        return "network" in vars(self)

    def __getattr__(self, name: str) -> Any:  # only reached while `name` is unset: load, then read it
        if name not in self.LOADED_ATTRIBUTES or "model_dir" not in vars(self):
            raise AttributeError(name)
        started = time.perf_counter()
        overrides = {key: value for key, value in vars(self).items() if key in self.LOADED_ATTRIBUTES}  # set before
        try:
            network, tokenizer = load_aligner(self.model_dir)
            AlignerScorer.__init__(self, network, tokenizer, device=str(self.device), identity=self.identity)
        except FactlabError:
            raise
        except Exception as error:  # an AttributeError from here would read as a missing attribute (hasattr: False)
            raise FactlabError(f"loading the aligner in {self.model_dir} failed: {error!r}") from error
        vars(self).update(overrides)  # e.g. a throughput run's shorter max_length
        self.load_seconds = time.perf_counter() - started
        return getattr(self, name)


def save_aligner(network: AlignerNetwork, tokenizer: Any, model_dir: str | Path, settings: dict[str, Any]) -> None:
    folder = Path(model_dir)
    folder.mkdir(parents=True, exist_ok=True)
    state = {name: tensor.detach().cpu().contiguous() for name, tensor in network.state_dict().items()}
    with atomic_path(folder / WEIGHTS_FILE) as tmp:
        save_file(state, str(tmp))
    encoder_dir = folder / ENCODER_DIR
    network.encoder.config.save_pretrained(encoder_dir)
    tokenizer.save_pretrained(encoder_dir)
    write_json({"aligner": asdict(network.config), "settings": settings}, folder / CONFIG_FILE)


def load_aligner(model_dir: str | Path) -> tuple[AlignerNetwork, Any]:
    from transformers import AutoConfig, AutoTokenizer

    folder = check_aligner_folder(model_dir)
    os.environ["HF_HUB_OFFLINE"] = "1"  # everything is in the folder
    config = AlignerConfig(**aligner_config(folder))
    encoder_config = AutoConfig.from_pretrained(folder / ENCODER_DIR)
    encoder = auto_encoder(copy.deepcopy(encoder_config))
    network = AlignerNetwork(encoder, config)
    network.load_state_dict(load_file(str(folder / WEIGHTS_FILE)))
    return network.eval(), AutoTokenizer.from_pretrained(folder / ENCODER_DIR)


class HubNLIScorer:
    """Any sequence classifier trained for NLI, from the hub or a folder: support = P(`entailment_label`).

    `probabilities` maps its labels onto entail / neutral / contradict (module docstring): a 2-label
    model gets P(contradict) = 0; a model of 3 or more labels needs `contradiction_label` among them.
    """

    def __init__(
        self,
        model_name_or_path: str,
        entailment_label: str,
        device: str = "auto",
        max_length: int = 512,
        contradiction_label: str = "contradiction",
    ) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
            model = AutoModelForSequenceClassification.from_pretrained(model_name_or_path)
        except OSError as error:
            raise FactlabError(f"cannot load NLI model {model_name_or_path!r}: {error}".splitlines()[0]) from error
        labels = {str(name).lower(): int(index) for name, index in model.config.label2id.items()}
        if entailment_label.lower() not in labels:
            raise FactlabError(
                f"NLI model {model_name_or_path!r} has no label {entailment_label!r}; its labels: {sorted(model.config.label2id)}"
            )
        self.entailment_index = labels[entailment_label.lower()]
        self.labels = sorted(model.config.label2id)
        self.contradiction_label = contradiction_label
        # None where the model has no such label: fine for support and for a 2-label model, an error
        # for the distribution of a larger one (which of its other labels is the contradiction?)
        self.contradiction_index = labels.get(contradiction_label.lower())
        self.device = select_device(device)
        self.model = model.to(self.device).eval()
        self.max_length = min(max_length, getattr(self.tokenizer, "model_max_length", max_length) or max_length)
        self.identity = f"hub_nli:{model_name_or_path}:{entailment_label}"
        self.token_types = uses_token_types(self.tokenizer)

    def support(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        logits = self.logits(input_ids, attention_mask, token_type_ids)
        return torch.softmax(logits.float(), dim=-1)[:, self.entailment_index]

    def logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if self.token_types and token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        return self.model(**inputs).logits

    @property
    def has_contradiction(self) -> bool:
        return self.contradiction_index is not None

    @property
    def distribution_identity(self) -> str:
        return f"{self.identity}:{self.contradiction_label if self.has_contradiction else '-'}"

    def probabilities(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None
    ) -> torch.Tensor:
        # checked here, not at loading, so that support-only users of any classifier load it as before
        if self.contradiction_index == self.entailment_index:
            raise FactlabError(f"NLI model {self.identity!r}: the entailment and contradiction labels are one label")
        logits = self.logits(input_ids, attention_mask, token_type_ids)
        if self.contradiction_index is None and logits.shape[-1] > 2:
            raise FactlabError(
                f"NLI model {self.identity!r} has {logits.shape[-1]} labels but no contradiction label "
                f"{self.contradiction_label!r}; its labels: {self.labels}"
            )
        return nli_distribution(torch.softmax(logits.float(), dim=-1), self.entailment_index, self.contradiction_index)


def nli_distribution(probs: torch.Tensor, entailment_index: int, contradiction_index: int | None) -> torch.Tensor:
    """[batch, labels] classifier probabilities -> [batch, 3] (entail, neutral, contradict).

    Neutral is 1 - entail - contradict computed as the sum of the other labels (so rows still sum
    to 1 in floating point as closely as the softmax did); no contradiction label: P(contradict) = 0.
    """
    entail = probs[:, entailment_index]
    contradict = probs[:, contradiction_index] if contradiction_index is not None else torch.zeros_like(entail)
    others = [i for i in range(probs.shape[-1]) if i not in (entailment_index, contradiction_index)]
    neutral = probs[:, others].sum(-1) if others else torch.zeros_like(entail)
    return torch.stack([entail, neutral, contradict], dim=-1)

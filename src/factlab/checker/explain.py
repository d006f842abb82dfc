"""One readable sentence per unsupported span: what the source says instead, or that it says nothing of it.

Built from the span, the evidence sentence of its output sentence (the best source sentence inside the best
chunk: factlab.score.alignscore) and the source, with no generative model:
- a number or date the source states otherwise: `"in 2015" is not supported: the source says "2013" (sentence 4)`
  (the evidence sentence's numbers that the span lacks);
- a name the source replaces: `"Smith" is not supported: the source says "Jones" (sentence 2)` (the evidence
  sentence's capitalised names that the output does not use);
- words the source has, but not as the output puts them: `"Jones" is in the source, but not as the output states
  it`, with the closest evidence sentence;
- anything else: `no source sentence mentions "the mayor"`, with the closest evidence sentence.
Sentence numbers count from 1, in the source's sentences as the checker splits them.
"""

from __future__ import annotations

import re

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|the\s+|de\s+)?[A-Z][\w'-]*)*")
QUOTE_LIMIT = 120  # characters of an evidence sentence quoted in full


def quoted(text: str) -> str:
    text = " ".join(text.split())
    return f'"{text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 1] + "…"}"'


def alternatives(pattern: re.Pattern[str], span: str, evidence: str, output: str) -> list[str]:
    """The evidence sentence's matches of `pattern` that neither the span nor the rest of the output uses."""
    used = {match.lower() for match in pattern.findall(output)}
    found = []
    for match in pattern.findall(evidence):
        if match.lower() not in used and match.lower() not in span.lower() and match not in found:
            found.append(match)
    return found


def explain(span: str, output: str, source: str, evidence: str | None, evidence_number: int | None) -> str:
    """The explanation of one unsupported `span` of `output`; `evidence` is its sentence's best source sentence
    (number `evidence_number`, from 1), None when the source gave none."""
    where = f" (sentence {evidence_number})" if evidence_number is not None else ""
    if evidence:
        kinds = [NUMBER] if NUMBER.search(span) else []
        kinds += [NAME] if NAME.search(span) else []
        for pattern in kinds:
            options = alternatives(pattern, span, evidence, output)
            if options:
                return f"{quoted(span)} is not supported: the source says {quoted(options[0])}{where}"
    closest = f"; the closest source sentence{where} says {quoted(evidence)}" if evidence else ""
    if span.strip().lower() in source.lower():
        return f"{quoted(span)} is in the source, but not as the output states it{closest}"
    return f"no source sentence mentions {quoted(span)}{closest}"

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

`span_records` gives each unsupported phrase of a scored output (factlab.score.alignscore's detail) its
explanation and its error type: the FRANK category (Pagnoni et al., 2021) the aligner's type head finds most
likely for the span's sentence, with its probability, and the FAVA category (Mishra et al., 2024) it maps to
(`FAVA_TYPE_OF`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factlab.models.token_localiser import TokenLocaliser

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


# FRANK's categories as FAVA's: a wrong entity, number or date, or referent is FAVA's `entity` error (a few wrong
# words), a wrong predicate or link its `relation` error, content the article lacks its `unverifiable` one.
FAVA_TYPE_OF = {
    "EntE": "entity",
    "CircE": "entity",
    "CorefE": "entity",
    "RelE": "relation",
    "LinkE": "relation",
    "OutE": "unverifiable",
}


def span_records(
    result: dict[str, Any], output: str, threshold: float, source: str = "", localiser: TokenLocaliser | None = None
) -> list[dict[str, Any]]:
    """The unsupported phrases of one scored output (`tokens`: word pieces with support, read through the token
    localiser when one is given; `sentences`: the per-sentence detail), each with its sentence, an explanation
    from that sentence's best evidence sentence, and the sentence's most likely error type (null without a type
    head)."""
    from factlab.models.token_localiser import scored_words
    from factlab.models.token_words import cut_at_breaks, phrases_from_words

    sentences = [(int(item["start"]), int(item["end"])) for item in result["sentences"]]
    records = []
    breaks = sorted(start for start, _ in sentences)
    words = cut_at_breaks(scored_words(result.get("tokens"), output, source, localiser), breaks)
    for start, end, probability in phrases_from_words(output, words, threshold, breaks):
        sentence = next((index for index, (s, e) in enumerate(sentences) if s <= start < e), None)
        detail = result["sentences"][sentence] if sentence is not None else {}
        found = detail.get("evidence")
        best = found[0] if found is not None and len(found) else None
        evidence = source[int(best["start"]) : int(best["end"])] if best is not None else None
        number = int(best["source_sentence"]) + 1 if best is not None else None
        types = {name: value for name, value in (detail.get("error_types") or {}).items() if value is not None}
        top = max(types, key=lambda name: types[name]) if types else None
        records.append(
            {
                "text": output[start:end],
                "start": start,
                "end": end,
                "probability": probability,
                "sentence": sentence,
                "explanation": explain(output[start:end], output, source, evidence, number),
                "error_type": top,
                "error_type_probability": float(types[top]) if top is not None else None,
                "fava_type": FAVA_TYPE_OF.get(top) if top is not None else None,
            }
        )
    return records

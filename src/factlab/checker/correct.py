"""A suggested fix per unsupported span, kept only where the checker itself then finds the sentence supported.

For each span (factlab.checker.api: the token head's phrases) the candidates are edits of its output sentence:
- replacements from the sentence's evidence sentences (the best source sentences of its best chunk): their
  numbers where the span holds a number, their capitalised names where it holds a name
  (factlab.checker.explain's patterns), each not already in the output;
- deletion of the span (with the space before it), where no replacement is offered, the span does not open its
  sentence, at least `MIN_WORDS_LEFT` words remain, and the sentence stays grammatical (`deletion_keeps_grammar`:
  the span is whole modifiers in the sentence's dependency parse, so what remains is the same sentence without
  them).
An edit replaces or removes whole words only (`on_word_boundaries`): "200million" never becomes "11million".

Every candidate sentence is scored against the sentence's best chunk by the checker's own reading (one engine
call for all of a batch's candidates); the best candidate is kept when its support reaches the checker's bar (the
decision threshold, or the higher correction bar chosen on validation so that few consistent outputs are rewritten:
factlab.checker.calibration.correction_bar) and beats the sentence's own. An output the checker finds consistent is
never changed. The
corrected output applies the kept edits (one per span, non-overlapping, left to right) with their character
offsets in the original output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from factlab.checker.explain import NAME, NUMBER, alternatives
from factlab.text.words import whitespace_word_count

MIN_WORDS_LEFT = 3  # a deletion that leaves fewer words leaves no claim to check
# Dependency relations (spaCy's English labels) of a phrase a sentence stays grammatical without: adjectival, adverbial
# and numeric modifiers, prepositional phrases, compounds, relative and participial clauses, appositions. Subjects,
# objects, verbs, determiners, possessives and the like are needed by what remains.
REMOVABLE_RELATIONS = frozenset({"amod", "advmod", "npadvmod", "nummod", "quantmod", "compound", "prep", "acl", "relcl", "appos"})
DANGLING_PUNCTUATION = re.compile(r"^\s*[,;:]|[,;:]\s*[,;:.!?]")


def on_word_boundaries(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] begins and ends at word boundaries (no letter or digit on both sides of either end)."""
    inside_start = start > 0 and start < len(text) and text[start - 1].isalnum() and text[start].isalnum()
    inside_end = 0 < end < len(text) and text[end - 1].isalnum() and text[end].isalnum()
    return not inside_start and not inside_end


def deletion_keeps_grammar(sentence: str, start: int, end: int) -> bool:
    """Whether `sentence` without sentence[start:end] is still grammatical, read off its dependency parse (spaCy's
    `en_core_web_sm`): the span's tokens are whole subtrees (every word that depends on one of them is in it), each
    attached to the rest by a `REMOVABLE_RELATIONS` relation, and no punctuation is left dangling (", ," or a comma
    opening the sentence)."""
    from factlab.runtime import PARSE_ONLY, load_spacy

    doc = load_spacy(PARSE_ONLY)(sentence)
    inside = [token for token in doc if token.idx < end and token.idx + len(token) > start]
    if not inside or any(token.idx < start or token.idx + len(token) > end for token in inside):
        return False  # the span cuts a token
    indices = {token.i for token in inside}
    if any(descendant.i not in indices for token in inside for descendant in token.subtree):
        return False
    tops = [token for token in inside if token.head.i not in indices or token.head.i == token.i]
    if any(token.dep_ not in REMOVABLE_RELATIONS for token in tops):
        return False
    return not DANGLING_PUNCTUATION.search(sentence[:start] + sentence[end:])


@dataclass(frozen=True)
class Candidate:
    row: int  # the output's position in the batch
    span: int  # the span's index in that output's spans
    start: int  # character offsets in the output of the text replaced
    end: int
    replacement: str
    premise: str  # the sentence's best chunk, as it lies in the source
    sentence: str  # the edited sentence
    original: str  # the sentence as it is


def span_candidates(
    row: int, index: int, span: dict[str, Any], output: str, source: str, sentence: dict[str, Any]
) -> list[Candidate]:
    """The edits of one span's sentence: replacements from its evidence sentences, and the span's deletion."""
    start, end = int(span["start"]), int(span["end"])
    s_start, s_end = int(sentence["start"]), int(sentence["end"])
    premise = source[int(sentence["chunk_start"]) : int(sentence["chunk_end"])]
    original = output[s_start:s_end]
    text = output[start:end]
    options: list[tuple[int, int, str]] = []
    evidence = " ".join(source[int(e["start"]) : int(e["end"])] for e in sentence.get("evidence", []))
    for pattern in (NUMBER, NAME):
        matches = list(pattern.finditer(text))
        if matches and evidence:
            # the span's own number or name is what changes: replace that part, keep the rest of the span
            first = matches[0]
            a, b = start + first.start(), start + first.end()
            if not on_word_boundaries(output, a, b):
                continue
            for option in alternatives(pattern, text, evidence, output):
                options.append((a, b, option))
    # deletion, the fallback for content no evidence sentence offers a replacement for (not a sentence's opening
    # words, its subject as a rule): the span and the space before it
    a, b = start, end
    if not options and a > s_start and output[a - 1] == " " and on_word_boundaries(output, a, b):
        a -= 1
        if whitespace_word_count(output[s_start:a] + output[b:s_end]) >= MIN_WORDS_LEFT and deletion_keeps_grammar(
            original, start - s_start, b - s_start
        ):
            options.append((a, b, ""))
    candidates = []
    for a, b, replacement in options:
        edited = output[s_start:a] + replacement + output[b:s_end]
        candidates.append(Candidate(row, index, a, b, replacement, premise, edited, original))
    return candidates


def best_edits(
    candidates: Sequence[Candidate], supports: Sequence[float], originals: dict[tuple[str, str], float]
) -> dict[tuple[int, int], tuple[Candidate, float, float]]:
    """(row, span) -> (the span's best candidate, its support, the sentence's own support), for every span whose best
    candidate beats the sentence's own support: an edit that passes any bar up to its support."""
    best: dict[tuple[int, int], tuple[Candidate, float]] = {}
    for candidate, support in zip(candidates, supports, strict=True):
        key = (candidate.row, candidate.span)
        if key not in best or support > best[key][1]:
            best[key] = (candidate, float(support))
    found = {}
    for key, (candidate, support) in best.items():
        before = originals[(candidate.premise, candidate.original)]
        if support > before:
            found[key] = (candidate, support, before)
    return found


def choose_edits(
    candidates: Sequence[Candidate], supports: Sequence[float], originals: dict[tuple[str, str], float], bar: float
) -> dict[tuple[int, int], tuple[Candidate, float, float]]:
    """(row, span) -> (the best candidate, its support, the sentence's own), where it reaches `bar` and beats the
    sentence's own support."""
    return {key: edit for key, edit in best_edits(candidates, supports, originals).items() if edit[1] >= bar}


def apply_edits(output: str, edits: Sequence[tuple[Candidate, float, float]]) -> tuple[str, list[dict[str, Any]]]:
    """The output with the edits applied (left to right, an edit overlapping an earlier one skipped), and the edits."""
    pieces, records, position = [], [], 0
    for candidate, support, before in sorted(edits, key=lambda item: item[0].start):
        if candidate.start < position:
            continue
        pieces += [output[position : candidate.start], candidate.replacement]
        records.append(
            {
                "start": candidate.start,
                "end": candidate.end,
                "text": output[candidate.start : candidate.end],
                "replacement": candidate.replacement,
                "support_before": before,
                "support_after": support,
            }
        )
        position = candidate.end
    pieces.append(output[position:])
    return "".join(pieces), records

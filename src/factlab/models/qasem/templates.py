"""QA-SRL question templates: slots, voice, semantic role, rendering, and the template vocabulary.

A QA-SRL question fills seven slots: wh, aux, subj, verb, obj, prep, obj2 ("What did someone
apologize for?" = what / did / someone / Stem / - / for / -). The verb slot is abstract: optional
prefix words ("not", "be", "being", "been", "have") plus an inflection name (factlab.models.qasem.
inflection); rendering a question inflects the predicate's verb (for an event noun, its verb form).

Canonical slots: QA-SRL's state machine labels a verb form by its spelling, so a passive regular
verb ("was suspended") is labelled "Past" and an irregular one ("was given") "PastParticiple". In a
passive or perfect context factlab writes both as "PastParticiple" (same text for regular verbs,
the grammatical form for irregular ones), so that one template covers both.

Semantic role (for labelled matching), after He et al. (2015, Table 7) as QANom's evaluation
implements it: who/what questions map to R0 (active, empty subject slot), R1 (active with a subject
and no object; passive with an empty subject), R2 (otherwise), R2 carrying the preposition when
there is one ("R2_for"); a passive question with prep "by" is R0. Adjunct questions (when, where,
why, how, how much, how long) are their wh-word, plus the preposition when there is one and obj2
is empty ("where_from").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from factlab.errors import FactlabError
from factlab.models.qasem.inflection import INFLECTIONS, PAST, PAST_PARTICIPLE, STEM, inflect
from factlab.models.qasem.types import QuestionSlots

SLOT_NAMES = tuple(field.name for field in fields(QuestionSlots))  # wh, aux, subj, verb, obj, prep, obj2
CORE_WH = frozenset({"who", "what"})
ADJUNCT_WH = frozenset({"when", "where", "why", "how", "how much", "how long"})
BE_AUX = frozenset({"is", "was", "are", "were", "isn't", "wasn't", "aren't", "weren't", "be", "being", "been"})
HAVE_AUX = frozenset({"has", "have", "had", "hasn't", "haven't", "hadn't"})
BE_PREFIX = frozenset({"be", "being", "been"})

TemplateKey = tuple[str, str, str, str, str, str, str]


def split_verb(verb: str) -> tuple[tuple[str, ...], str]:
    """("not", "be"), "Past" from "not be Past".

    The inflection is "" when the slot has none: upstream leaves it empty (or holds only a prefix,
    "being") for the few questions its state machine could not parse.
    """
    words = verb.split()
    if not words or words[-1] not in INFLECTIONS:
        return tuple(words), ""
    return tuple(words[:-1]), words[-1]


def auxiliary_context(slots: QuestionSlots) -> str:
    """The word the verb form depends on: the last prefix word other than "not", else the aux."""
    prefix, _ = split_verb(slots.verb)
    words = [word for word in prefix if word != "not"]
    return words[-1] if words else slots.aux.lower()


def is_passive(slots: QuestionSlots) -> bool:
    """A form of "be" governs a participle-like form ("was suspended", "might be given")."""
    _, inflection = split_verb(slots.verb)
    context = auxiliary_context(slots)
    return inflection in (PAST, PAST_PARTICIPLE, STEM) and (context in BE_AUX or context in BE_PREFIX)


def is_perfect(slots: QuestionSlots) -> bool:
    _, inflection = split_verb(slots.verb)
    return inflection in (PAST, PAST_PARTICIPLE, STEM) and auxiliary_context(slots) in HAVE_AUX


def canonical_slots(slots: QuestionSlots) -> QuestionSlots:
    """Lower-cased slots; in a passive or perfect context the participle is "PastParticiple"."""
    values = {name: " ".join(getattr(slots, name).lower().split()) for name in SLOT_NAMES}
    values["verb"] = " ".join(slots.verb.split())  # inflection names keep their case
    canonical = QuestionSlots(**values)
    prefix, inflection = split_verb(canonical.verb)
    if inflection in (PAST, STEM) and (is_passive(canonical) or is_perfect(canonical)):
        canonical = QuestionSlots(**{**values, "verb": " ".join([*prefix, PAST_PARTICIPLE])})
    return canonical


def render_question(slots: QuestionSlots, verb_lemma: str) -> str:
    """The question text: slots in order, the verb inflected, first letter upper-case, "?"."""
    prefix, inflection = split_verb(slots.verb)
    if not inflection:
        raise FactlabError(f"cannot render a question whose verb slot is empty: {slots}")
    words = [slots.wh, slots.aux, slots.subj, *prefix, inflect(verb_lemma, inflection), slots.obj, slots.prep, slots.obj2]
    text = " ".join(word for word in words if word)
    return text[:1].upper() + text[1:] + "?"


def semantic_role(slots: QuestionSlots) -> str:
    """He et al. (2015) role of a question: R0, R1, R2, R2_<prep>, <wh> or <wh>_<prep>."""
    wh, prep = slots.wh.lower(), slots.prep.lower()
    if wh in CORE_WH:
        object_two = "R2_" + prep if prep else "R2"
        if is_passive(slots):
            if not slots.subj:
                return "R1"
            return "R0" if prep == "by" else object_two
        if not slots.subj:
            return "R0"
        if not slots.obj:
            return "R1"
        return object_two
    if wh in ADJUNCT_WH:
        return f"{wh}_{prep}" if prep and not slots.obj2 else wh
    return wh or "none"


def template_key(slots: QuestionSlots) -> TemplateKey:
    return tuple(getattr(slots, name) for name in SLOT_NAMES)  # type: ignore[return-value]


def slots_from_key(key: Iterable[str]) -> QuestionSlots:
    return QuestionSlots(*key)


# Slot weights of the template distance used to map rare templates onto kept ones: a different
# role costs most, then the wh-word, then the argument slots; aux and verb (tense) cost least.
ROLE_WEIGHT = 16
SLOT_WEIGHTS = {"wh": 8, "prep": 4, "obj2": 4, "subj": 2, "obj": 2, "aux": 1, "verb": 1}


def template_distance(a: QuestionSlots, b: QuestionSlots) -> int:
    distance = sum(weight for name, weight in SLOT_WEIGHTS.items() if getattr(a, name) != getattr(b, name))
    return distance + ROLE_WEIGHT * (semantic_role(a) != semantic_role(b))


@dataclass
class TemplateVocabulary:
    """The question templates the parser predicts: those seen at least `min_count` times in training.

    Rarer templates are mapped to the nearest kept one (template_distance; ties to the more
    frequent), so every training question has a target. `counts` are training frequencies of the
    canonical templates, `mapped` the rare template -> kept index map.
    """

    templates: list[TemplateKey]
    counts: dict[TemplateKey, int]
    mapped: dict[TemplateKey, int]
    min_count: int

    @classmethod
    def build(cls, questions: Iterable[QuestionSlots], min_count: int) -> TemplateVocabulary:
        counts = Counter(template_key(canonical_slots(slots)) for slots in questions if split_verb(slots.verb)[1])
        if not counts:
            raise FactlabError("no question templates to build a vocabulary from")
        ordered = sorted(counts, key=lambda key: (-counts[key], key))
        kept = [key for key in ordered if counts[key] >= min_count] or ordered[:1]
        index = {key: number for number, key in enumerate(kept)}
        mapped = {}
        for key in ordered:
            if key not in index:
                slots = slots_from_key(key)
                mapped[key] = min(index.values(), key=lambda n: (template_distance(slots, slots_from_key(kept[n])), n))
        return cls(templates=kept, counts=dict(counts), mapped=mapped, min_count=min_count)

    def __len__(self) -> int:
        return len(self.templates)

    def index(self, slots: QuestionSlots) -> int | None:
        """The class of a question (kept or mapped); None when its verb slot is empty or unknown."""
        if not split_verb(slots.verb)[1]:
            return None
        key = template_key(canonical_slots(slots))
        if key in self.mapped:
            return self.mapped[key]
        try:
            return self.templates.index(key)
        except ValueError:
            return None

    def slots(self, index: int) -> QuestionSlots:
        return slots_from_key(self.templates[index])

    def roles(self) -> list[str]:
        return [semantic_role(self.slots(number)) for number in range(len(self.templates))]

    def coverage(self) -> float:
        """Share of training questions whose own template was kept (not mapped)."""
        kept = sum(self.counts[key] for key in self.templates)
        return kept / sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "min_count": self.min_count,
            "templates": [{"slots": list(key), "count": self.counts[key]} for key in self.templates],
            "mapped": [{"slots": list(key), "count": self.counts[key], "to": target} for key, target in self.mapped.items()],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TemplateVocabulary:
        templates = [tuple(item["slots"]) for item in data["templates"]]
        counts = {tuple(item["slots"]): int(item["count"]) for item in [*data["templates"], *data["mapped"]]}
        mapped = {tuple(item["slots"]): int(item["to"]) for item in data["mapped"]}
        return cls(templates=templates, counts=counts, mapped=mapped, min_count=int(data["min_count"]))  # type: ignore[arg-type]

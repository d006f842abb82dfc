"""English verb inflection for QA-SRL questions: stem, past, past participle, -s and -ing forms.

QA-SRL writes the verb slot abstractly ("Past", "being PastParticiple"); rendering a question needs
the surface form of the predicate's verb. Regular verbs follow spelling rules (e-drop, y -> ie,
consonant doubling); irregular verbs come from a table, also through a prefix ("rebuild" ->
"rebuilt", "understand" -> "understood"). American spelling ("traveled"), as in QA-SRL.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from functools import lru_cache

from factlab.errors import FactlabError

# The inflection names of QA-SRL's question state machine (the `verb_slot_inflection` column).
STEM = "Stem"
PAST = "Past"
PAST_PARTICIPLE = "PastParticiple"
PRESENT_3RD = "PresentSingular3rd"
PRESENT_PARTICIPLE = "PresentParticiple"
INFLECTIONS = (STEM, PAST, PAST_PARTICIPLE, PRESENT_3RD, PRESENT_PARTICIPLE)

# base past past-participle; one verb a line.
IRREGULAR_TABLE = """
arise arose arisen
awake awoke awoken
be was been
bear bore borne
beat beat beaten
become became become
befall befell befallen
begin began begun
behold beheld beheld
bend bent bent
beset beset beset
bet bet bet
bid bid bid
bind bound bound
bite bit bitten
bleed bled bled
blow blew blown
break broke broken
breed bred bred
bring brought brought
broadcast broadcast broadcast
build built built
burst burst burst
buy bought bought
cast cast cast
catch caught caught
choose chose chosen
cling clung clung
come came come
cost cost cost
creep crept crept
cut cut cut
deal dealt dealt
dig dug dug
do did done
draw drew drawn
drink drank drunk
drive drove driven
dwell dwelt dwelt
eat ate eaten
fall fell fallen
feed fed fed
feel felt felt
fight fought fought
find found found
flee fled fled
fling flung flung
fly flew flown
forbid forbade forbidden
forecast forecast forecast
forget forgot forgotten
forgive forgave forgiven
forsake forsook forsaken
freeze froze frozen
get got gotten
give gave given
go went gone
grind ground ground
grow grew grown
hang hung hung
have had had
hear heard heard
hide hid hidden
hit hit hit
hold held held
hurt hurt hurt
keep kept kept
kneel knelt knelt
know knew known
lay laid laid
lead led led
leave left left
lend lent lent
let let let
lie lay lain
light lit lit
lose lost lost
make made made
mean meant meant
meet met met
mistake mistook mistaken
pay paid paid
prove proved proven
put put put
quit quit quit
read read read
rid rid rid
ride rode ridden
ring rang rung
rise rose risen
run ran run
say said said
see saw seen
seek sought sought
sell sold sold
send sent sent
set set set
sew sewed sewn
shake shook shaken
shed shed shed
shine shone shone
shoot shot shot
show showed shown
shrink shrank shrunk
shut shut shut
sing sang sung
sink sank sunk
sit sat sat
slay slew slain
sleep slept slept
slide slid slid
sling slung slung
slit slit slit
speak spoke spoken
speed sped sped
spend spent spent
spin spun spun
spit spat spat
split split split
spread spread spread
spring sprang sprung
stand stood stood
steal stole stolen
stick stuck stuck
sting stung stung
stink stank stunk
strike struck struck
string strung strung
strive strove striven
swear swore sworn
sweep swept swept
swell swelled swollen
swim swam swum
swing swung swung
take took taken
teach taught taught
tear tore torn
tell told told
think thought thought
throw threw thrown
thrust thrust thrust
tread trod trodden
wake woke woken
wear wore worn
weave wove woven
wed wed wed
weep wept wept
win won won
wind wound wound
wring wrung wrung
write wrote written
"""

# Verbs that take an irregular verb as a suffix ("withdraw", "oversee", "rebuild").
IRREGULAR_PREFIXES = ("under", "over", "with", "fore", "out", "mis", "re", "un", "up", "be")
# Look like prefix + irregular verb but are regular ("relay" -> "relayed", "behave" -> "behaved").
PREFIX_FALSE_FRIENDS = frozenset({"relay", "belay", "behave", "belie"})

# Two-or-more-syllable verbs stressed on the last syllable: the final consonant doubles.
FINAL_STRESS_DOUBLING = frozenset(
    """
abet acquit admit allot beget begin commit compel confer control defer deter dispel embed emit equip
excel expel forbid forget format incur infer kidnap occur omit outrun outwit overrun patrol permit
prefer program propel rebel recur refer regret remit repel rerun submit surveil transfer transmit
upset
""".split()
)
# Verbs ending in "c" take a "k" before -ed/-ing ("panicked").
C_TO_CK = frozenset({"panic", "mimic", "picnic", "traffic", "frolic"})

VOWELS = "aeiou"
ONE_SYLLABLE_CVC = re.compile(r"^[^aeiou]*(?:qu|[aeiou])[^aeiouwxy]$")  # "stop", "plan", "quit"


@lru_cache(maxsize=1)
def irregular_forms() -> dict[str, tuple[str, str]]:
    """base -> (past, past participle) from the table."""
    forms = {}
    for line in IRREGULAR_TABLE.strip().splitlines():
        base, past, participle = line.split()
        forms[base] = (past, participle)
    return forms


def irregular(lemma: str) -> tuple[str, str] | None:
    """(past, past participle) of an irregular verb, also behind a prefix; None for regular verbs."""
    table = irregular_forms()
    if lemma in table:
        return table[lemma]
    if lemma in PREFIX_FALSE_FRIENDS:
        return None
    for prefix in IRREGULAR_PREFIXES:
        rest = lemma[len(prefix) :]
        if lemma.startswith(prefix) and len(rest) >= 2 and (forms := irregular(rest)):
            return prefix + forms[0], prefix + forms[1]  # "misunderstand" -> mis + under + stand
    return None


def doubles_final_consonant(lemma: str) -> bool:
    """True when -ed/-ing double the last letter: "stop" -> "stopped", "prefer" -> "preferred"."""
    if lemma in FINAL_STRESS_DOUBLING:
        return True
    return bool(ONE_SYLLABLE_CVC.match(lemma))


def regular_suffix(lemma: str, suffix: str) -> str:
    """lemma + "ed" or "ing" with English spelling rules."""
    if lemma in C_TO_CK:
        return lemma + "k" + suffix
    if doubles_final_consonant(lemma):
        return lemma + lemma[-1] + suffix
    if suffix == "ed":
        if lemma.endswith("e"):
            return lemma + "d"
        if lemma.endswith("y") and len(lemma) > 1 and lemma[-2] not in VOWELS:
            return lemma[:-1] + "ied"
        return lemma + "ed"
    # -ing
    if lemma.endswith("ie"):
        return lemma[:-2] + "ying"  # die -> dying
    if lemma.endswith("e") and not lemma.endswith(("ee", "ye", "oe")) and lemma != "be":
        return lemma[:-1] + "ing"  # make -> making; see -> seeing
    return lemma + "ing"


def third_person(lemma: str) -> str:
    if lemma == "be":
        return "is"
    if lemma == "have":
        return "has"
    if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
        return lemma + "es"
    if lemma.endswith("y") and len(lemma) > 1 and lemma[-2] not in VOWELS:
        return lemma[:-1] + "ies"
    return lemma + "s"


def inflect(lemma: str, inflection: str) -> str:
    """The surface form of `lemma` (a verb's base form) for a QA-SRL inflection name.

    Multi-word lemmas ("take off", "set up") inflect their first word.
    """
    if inflection not in INFLECTIONS:
        raise FactlabError(f"unknown verb inflection {inflection!r}; expected one of {INFLECTIONS}")
    lemma = lemma.strip().lower()
    if not lemma:
        raise FactlabError("cannot inflect an empty verb")
    head, _, particle = lemma.partition(" ")
    form = inflect_word(head, inflection)
    return f"{form} {particle}" if particle else form


def inflect_word(lemma: str, inflection: str) -> str:
    if inflection == STEM:
        return lemma
    if inflection == PRESENT_3RD:
        return third_person(lemma)
    if inflection == PRESENT_PARTICIPLE:
        return regular_suffix(lemma, "ing")
    forms = irregular(lemma)
    if forms:
        return forms[0] if inflection == PAST else forms[1]
    return regular_suffix(lemma, "ed")


def deinflections(word: str) -> list[str]:
    """Candidate base forms of an inflected verb by spelling rules ("hurried" -> "hurry", ...)."""
    word = word.lower()
    candidates = []
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            stem = word[: -len(suffix)]
            candidates += [stem, stem + "e"]
            if len(stem) > 2 and stem[-1] == stem[-2]:
                candidates.append(stem[:-1])  # "stopped" -> "stop"
            if suffix == "ed" and stem.endswith("i"):
                candidates.append(stem[:-1] + "y")  # "hurried" -> "hurry"
            if suffix == "ing" and stem.endswith("y"):
                candidates.append(stem[:-1] + "ie")  # "dying" -> "die"
            if stem.endswith("ck"):
                candidates.append(stem[:-1])  # "panicked" -> "panic"
    if word.endswith("ies"):
        candidates.append(word[:-3] + "y")
    if word.endswith("es"):
        candidates.append(word[:-2])
    if word.endswith("s"):
        candidates.append(word[:-1])
    for base, (past, participle) in irregular_forms().items():
        if word in (past, participle):
            candidates.append(base)
    return candidates


def verb_lemma(word: str, hints: Iterable[str] = (), lexicon: Collection[str] = frozenset()) -> str:
    """The base form of a verb as it appears in a sentence.

    Candidates: `hints` (e.g. spaCy's lemmas, tried first), then `deinflections`, then the word.
    The first candidate that inflects back to the word and is a known verb (`lexicon`) wins, else
    the first that inflects back, else the first hint ("staged": spaCy says stag or stage; only
    "stage" gives "staged").
    """
    word = word.lower()
    candidates = [hint.lower() for hint in hints if hint] + deinflections(word) + [word]
    regenerating = [c for c in candidates if any(inflect_word(c, inflection) == word for inflection in INFLECTIONS)]
    known = [c for c in regenerating if c in lexicon]
    return (known or regenerating or candidates)[0]

"""The word tables of the synthetic transforms (factlab.train.synthetic.transforms): NER labels, number and date
words, pronoun swaps, negation forms, dependency labels. Fixed English lists, kept apart from the code that reads
them so that each can be reviewed and extended on its own."""

from __future__ import annotations

from factlab.models.qasem.inflection import PAST, PRESENT_3RD, STEM

# spaCy NER labels: names that swap with names, values that change value, details an inserted phrase adds
NAMED_LABELS = ("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE")
NUMBER_LABELS = ("CARDINAL", "DATE", "MONEY", "PERCENT", "QUANTITY", "TIME", "ORDINAL")
DETAIL_LABELS = ("GPE", "LOC", "FAC", "DATE", "TIME", "ORG", "CARDINAL", "MONEY", "PERCENT", "EVENT")

# Value words: a number swap replaces one by another of its list
CARDINAL_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
DECADE_WORDS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
VALUE_WORD_LISTS = (CARDINAL_WORDS, DECADE_WORDS, ORDINAL_WORDS, MONTHS, WEEKDAYS)

# Gendered pronouns swap both ways; "her" and "his" depend on the tag (PRP$ determiner or PRP).
GENDER_SWAPS = {"he": "she", "she": "he", "him": "her", "himself": "herself", "herself": "himself", "hers": "his"}
POSSESSIVE_SWAPS = {"his": "her", "her": "his"}  # tag PRP$
OBJECT_SWAPS = {"his": "hers", "her": "him"}  # tag PRP ("the book is his", "saw her")
# Plural to singular: "they" only where the verb does not show agreement (past tense, modal).
PLURAL_SWAPS = {"them": ("him", "her"), "their": ("his", "her"), "theirs": ("his", "hers"), "themselves": ("himself", "herself")}
PLURAL_MARKERS = ("all", "both", "each", "together")  # "they all ate it together" stays plural

# Negation
NEGATORS = ("not", "n't", "never")  # the negations a negation edit removes
ADVERBS_BEFORE_NOT = ("also", "still")  # "is also not", not "is not also"
CONTRACTED_NEGATION_HOSTS = {"ca": "can", "wo": "will", "sha": "shall"}
DO_SUPPORT = {"VBD": ("did", PAST), "VBZ": ("does", PRESENT_3RD), "VBP": ("do", STEM)}
DO_FORMS = {"did": PAST, "does": PRESENT_3RD, "do": STEM}

# Dependency labels
SUBJECT_DEPS = ("nsubj", "nsubjpass", "expl")
FRONTED_DEPS = ("prep", "advmod", "npadvmod")
MODIFIER_DEPS = ("compound", "amod", "nmod", "poss")  # "summer camp": no "six seasons camp"

# Connectives and answers that open a sentence: they tie it to the one before, so a paraphrase never moves them
FRONTED_CONNECTIVES = ("however", "also", "then", "so", "thus", "therefore", "yes", "no")
LIGHT_VERBS = ("be", "have", "do", "get")
SWAP_PREPOSITIONS = ("from", "to")
SENTENCE_END = (".", "!", "?")

"""The names of the statistics' variants and threshold policies, in a module that imports nothing: the commands offer
them as choices, and their help must not import numpy, scipy or scikit-learn to list them. The modules that
implement them (`partial`, `williams`, `detection`, `localisation`, `paired`) take their names from here."""

from __future__ import annotations

from typing import Literal

PartialVariant = Literal["frank", "ranked"]
PARTIAL_VARIANTS: tuple[PartialVariant, ...] = ("frank", "ranked")

WilliamsVariant = Literal["two_sided", "frank_one_sided"]
WILLIAMS_VARIANTS: tuple[WilliamsVariant, ...] = ("two_sided", "frank_one_sided")

ThresholdPolicy = Literal["fixed05", "val_tuned", "oracle"]
THRESHOLD_POLICIES: tuple[ThresholdPolicy, ...] = ("fixed05", "val_tuned", "oracle")

LOCALISATION_POLICIES = ("fixed05", "val_tuned", "oracle")

# The names of a score table's token readings as scorers of their own: `<scorer>_tokens` (the aligner's token head,
# each word piece a unit) and `<scorer>_localiser` (the token head read through a token localiser).
TOKEN_SUFFIX = "_tokens"
LOCALISER_SUFFIX = "_localiser"

# What `paired.paired_auc_difference` computes, as the tables that report its p-values name it.
PAIRED_TEST = "paired document bootstrap of the ROC AUC difference (two-sided, percentile)"

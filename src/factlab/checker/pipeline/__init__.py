"""The pipeline's checker stage (workflow/rules/checker.smk, results/checker/): the checker folder packaged from the
trained aligner and its validation scores, and the checker measured (corrections, explanations, latency). The
library a user calls (`factlab.check`, `factlab.Checker`, `factlab check`) is `factlab.checker` and imports nothing
from here."""

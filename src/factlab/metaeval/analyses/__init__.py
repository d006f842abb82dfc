"""The meta-evaluation's analyses: they read score tables and write the meta-evaluation's files (CSV, JSON,
parquet under results/metaeval/), one per `factlab metaeval` command (`factlab.metaeval.cli`), each calling the
pure statistics of `factlab.metaeval`.

Modules: `detection` (scorers as detectors), `leaderboard` (every scorer's AUC against each benchmark's best
built-in scorer), `decisions` (how often the checker flags consistent outputs), `localisation` (token-level
localisation), `error_types` (the error-type head against FRANK's categories), `frank_scorers` and
`summeval_scorers` (scorers against FRANK's Factuality and SummEval's consistency, FRANK's protocol),
`qa_decomposition` and `qa_detection` (QASemConsistency's decomposition and QA-level detection), `qasem_parser`
(factlab's QASem parser scored), `score_tables` (score tables joined to their benchmark's labels, as these analyses read them);
`published/`, the published analyses rebuilt from their released inputs. Each module registers its sub-commands
with a `register(commands)` function.
"""

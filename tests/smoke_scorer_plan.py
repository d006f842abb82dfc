"""Over the built smoke run: what adding one user scorer plans (`snakemake -n --configfile`): the scorer's own jobs
(its shards and their merge, or its imported files) and the rules downstream of the score tables (meta-evaluation,
report pages, which show their scorer's detection row, and the paper), and nothing before the meta-evaluation: no job
of the download, data, preprocessing, training or tuning stages, and no job of another scorer.

    python tests/smoke_scorer_plan.py .smoke config/smoke_user_scorer.yaml
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from smoke_custom_plan import planned_jobs

# Rules of the stages before the meta-evaluation that a user scorer may plan, for its own name only.
OWN = ("score_python", "score_nli_model", "score_aligner_model", "import_scores", "merge_scores")
BEFORE_METAEVAL = re.compile(
    r"^(download_\w+|build_\w+|dataset_statistics|preprocess_\w+|train_\w+|tune_\w+|fit_\w+|check_\w+|score_\w+|"
    r"merge_scores|import_scores|export_published_scores|benchmark_scoring_throughput|scale_retrieval|package_checker)$"
)
# Each must be planned: the user's scorer meta-evaluated and reported, and its rows in the paper.
NEEDED = ("score_python", "merge_scores", "evaluate_detection", "evaluate_leaderboard", "report_localise", "paper_pdf")


def main(run: Path, configfile: Path) -> int:
    import yaml

    added = set(yaml.safe_load(configfile.read_text())["scorers"]["custom"])
    jobs = planned_jobs(run, configfile)
    rules = sorted({rule for rule, _ in jobs})
    problems = [
        f"plans {rule} for {wildcards}"
        for rule, wildcards in jobs
        if BEFORE_METAEVAL.match(rule) and not (rule in OWN and wildcards.get("scorer") in added)
    ]
    problems += [f"does not plan {rule}" for rule in NEEDED if rule not in rules]
    print(f"a user scorer plans {len(jobs)} jobs: {', '.join(rules)}")
    if problems:
        print("user scorer plan:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))

"""Inter-annotator agreement of the crowd labels behind QAGS (Wang et al., 2020) and XSumFaith (Maynez et al., 2020).

Inputs: benchmarks with a `votes` column (one array of 0/1 votes per item, 1 = consistent):
`qags_cnndm`, `qags_xsum` (3 votes per summary sentence) and `xsumfaith` (up to 3 workers per
summary; 9 summaries have only 2 answers). One row per dataset:

* items — all items; raters — the most votes any item has (rating slots, not fixed people).
* fleiss_kappa and majority_agreement_share — on the items with all `raters` votes, since
  Fleiss' κ needs the same number of ratings per item; `n_excluded` counts the others.
* krippendorff_alpha — nominal α on *all* items: missing ratings are allowed, so the
  2-vote items count too.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.errors import DataError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

AGREEMENT_COLUMNS = [
    "dataset",
    "items",
    "raters",
    "fleiss_kappa",
    "krippendorff_alpha",
    "majority_agreement_share",
    "n_excluded",
    "computed_on",
]


def ratings_matrix(votes: pd.Series) -> np.ndarray:
    """(items × max votes) float array of the votes, NaN where an item has fewer votes."""
    import numpy as np

    lengths = votes.map(len).to_numpy()
    if len(lengths) == 0 or lengths.min() < 1:
        raise DataError("every item needs at least one vote", field="votes")
    matrix = np.full((len(votes), int(lengths.max())), np.nan)
    for row, item_votes in enumerate(votes):
        matrix[row, : len(item_votes)] = np.asarray(item_votes, dtype=float)
    return matrix


def dataset_agreement(name: str, votes: pd.Series) -> dict[str, Any]:
    import numpy as np

    from factlab.metaeval import fleiss_kappa, krippendorff_alpha_nominal, majority_agreement_share

    matrix = ratings_matrix(votes)
    complete = ~np.isnan(matrix).any(axis=1)
    raters = matrix.shape[1]
    full = matrix[complete]
    return {
        "dataset": name,
        "items": len(matrix),
        "raters": raters,
        "fleiss_kappa": fleiss_kappa(full),
        "krippendorff_alpha": krippendorff_alpha_nominal(matrix),
        "majority_agreement_share": majority_agreement_share(full),
        "n_excluded": int((~complete).sum()),
        "computed_on": f"fleiss_kappa, majority_agreement_share: the {len(full)} items with {raters} votes; "
        f"krippendorff_alpha: all {len(matrix)} items",
    }


def agreement_table(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per dataset (in the given order) from each frame's `votes` column."""
    import pandas as pd

    rows = [dataset_agreement(name, frame["votes"]) for name, frame in frames.items()]
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def headline_metrics(agreement: pd.DataFrame) -> dict[str, Any]:
    table = agreement.set_index("dataset")
    return {
        column: table[column].round(6).to_dict() for column in ("fleiss_kappa", "krippendorff_alpha", "majority_agreement_share")
    } | {"n_excluded": table["n_excluded"].to_dict(), "items": table["items"].to_dict()}


# --- command line -------------------------------------------------------------------------


def register(commands: Any) -> None:
    command = commands.add_parser("annotator-agreement", help="Fleiss' kappa, Krippendorff's alpha of crowd votes")
    command.add_argument("--data", nargs="+", required=True, help="benchmark parquet files with a votes column")
    command.add_argument("--out-dir", required=True, help="writes agreement.csv and metrics.json")
    command.set_defaults(func=run_agreement)


def run_agreement(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.io import write_json, write_text

    frames = {Path(path).stem: pd.read_parquet(path, columns=["votes"]) for path in args.data}
    agreement = agreement_table(frames)
    out = Path(args.out_dir)
    write_text(agreement.to_csv(index=False), out / "agreement.csv")
    write_json(headline_metrics(agreement), out / "metrics.json")

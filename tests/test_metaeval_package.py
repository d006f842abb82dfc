"""factlab.metaeval's package namespace: its statistics import on first use, and none is shadowed by a submodule."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import factlab.metaeval

HEAVY_LIBRARIES = ("statsmodels", "krippendorff", "sklearn", "scipy.stats")


def test_no_exported_name_is_also_a_submodule() -> None:
    # Importing a submodule binds its name in the package: a statistic of the same name would then read as the module.
    folder = Path(factlab.metaeval.__file__).parent
    submodules = {path.stem for path in folder.iterdir() if path.suffix == ".py" or path.is_dir()}
    assert not submodules & set(factlab.metaeval.__all__)


def test_importing_the_package_imports_no_statistics_library_until_one_is_used() -> None:
    script = (
        "import sys, factlab.metaeval\n"
        f"print(sorted(name for name in {HEAVY_LIBRARIES!r} if name in sys.modules))\n"
        "import factlab.metaeval.correlations\n"
        "from factlab.metaeval import correlation, fleiss_kappa\n"
        "print(callable(correlation), 'statsmodels' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[:2] == ["[]", "True True"]


def test_every_exported_name_resolves() -> None:
    for name in factlab.metaeval.__all__:
        assert getattr(factlab.metaeval, name).__name__ == name

"""factlab: reproducible factual-consistency evaluation.

For scores of your own (source, output) pairs: `factlab.check(sources, outputs)`, or `factlab.Checker()` to load
the model once (factlab.checker.api); on the command line, `factlab check INPUT -o OUTPUT.jsonl`.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# Public name -> the submodule defining it, imported on first use (PEP 562): `import factlab` stays light, and
# factlab.workflow.codedeps reads this map to find the code a `from factlab import check` runs.
LAZY_EXPORTS = {"check": "checker.api", "Checker": "checker.api"}
__all__ = ["__version__", *sorted(LAZY_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name not in LAZY_EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{LAZY_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *LAZY_EXPORTS})

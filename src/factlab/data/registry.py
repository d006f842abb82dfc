"""Which benchmarks and tables exist, what upstream data each reads, and how it is built.

Each module in `factlab.data.adapters` exports `SPECS: list[BenchmarkSpec]`; they are
collected here so the workflow and the CLI see one registry.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from typing import Any

from factlab.data.spec import BenchmarkSpec
from factlab.errors import FactlabError

# Imported by name at run time (pkgutil), so invisible to import analysis: factlab.workflow.codedeps reads this.
DISCOVERED_PACKAGES = ("factlab.data.adapters",)


def _discover() -> dict[str, BenchmarkSpec]:
    import factlab.data.adapters as package

    specs: dict[str, BenchmarkSpec] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for spec in getattr(module, "SPECS", []):
            if spec.name in specs:
                raise FactlabError(f"benchmark {spec.name!r} is defined twice")
            specs[spec.name] = spec
    return specs


_REGISTRY: dict[str, BenchmarkSpec] | None = None


def builtin_specs() -> dict[str, BenchmarkSpec]:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _discover()
    return _REGISTRY


def all_specs(custom: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, BenchmarkSpec]:
    """Built-in specs plus bring-your-own benchmarks declared in params.yaml."""
    from factlab.data.adapters.custom import custom_spec

    specs = dict(builtin_specs())
    for name, config in (custom or {}).items():
        if name in specs:
            raise FactlabError(f"custom benchmark {name!r} clashes with a built-in benchmark")
        specs[name] = custom_spec(name, config)
    return specs


def get_spec(name: str, custom: Mapping[str, Mapping[str, Any]] | None = None) -> BenchmarkSpec:
    specs = all_specs(custom)
    if name not in specs:
        raise FactlabError(f"unknown benchmark {name!r}; known: {', '.join(sorted(specs))}")
    return specs[name]

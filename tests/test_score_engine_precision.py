"""The engine's `--precision auto`: bf16 exactly where the device computes it natively, read from the CPU's flags."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from factlab.errors import FactlabError
from factlab.models import engine

# /proc/cpuinfo lines, their flag lists shortened: an AMD EPYC (Zen 4) with AVX512-BF16, an Intel Xeon (Cascade Lake)
# without it, and an Arm Neoverse-V1 (BF16 in its Features).
ZEN4 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni avx512_bf16 vaes\n"
CASCADE_LAKE = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n"
NEOVERSE_V1 = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes sve asimdbf16 bf16 i8mm\n"


@pytest.mark.parametrize(
    ("cpuinfo", "native"), [(ZEN4, True), (CASCADE_LAKE, False), (NEOVERSE_V1, True)], ids=["zen4", "cascade_lake", "neoverse_v1"]
)
def test_auto_picks_bf16_only_with_native_cpu_support(cpuinfo: str, native: bool, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "cpuinfo"
    path.write_text(cpuinfo)
    read_flags = engine.cpu_flags
    monkeypatch.setattr(engine, "cpu_flags", lambda: read_flags(path))
    cpu = torch.device("cpu")
    assert engine.resolve_precision("auto", cpu) == ("bf16" if native else "fp32")
    assert engine.resolve_precision("fp32", cpu) == "fp32"  # what is asked for is kept
    assert engine.resolve_precision("bf16", cpu) == "bf16"


def test_no_cpuinfo_means_no_flags(tmp_path: Path) -> None:
    assert engine.cpu_flags(tmp_path / "absent") == frozenset()
    assert engine.resolve_precision("auto", torch.device("meta")) == "fp32"


def test_unknown_precision_is_an_error() -> None:
    with pytest.raises(FactlabError, match="unknown precision 'fp16'"):
        engine.resolve_precision("fp16", torch.device("cpu"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_auto_follows_cuda_bf16_support() -> None:
    expected = "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    assert engine.resolve_precision("auto", torch.device("cuda")) == expected

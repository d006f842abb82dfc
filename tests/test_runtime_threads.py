"""`factlab.runtime.set_threads`: the thread limit reaches torch whether torch is imported before or after it,
and a job that never needs torch (ROUGE) is not made to import it. Each case runs in a fresh interpreter with
no OMP_NUM_THREADS of its own (conftest sets one for the test process)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from factlab.errors import FactlabError
from factlab.runtime import set_threads


def run(code: str) -> str:
    env = {key: value for key, value in os.environ.items() if key not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    return subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout.strip()


def test_the_limit_reaches_torch_imported_before_or_after() -> None:
    default = int(run("import torch; print(torch.get_num_threads())"))
    wanted = 1  # below torch's default (one thread per core) on any machine of 2 cores or more, as CI's
    before = run(
        f"import sys; from factlab.runtime import set_threads; set_threads({wanted}); imported = 'torch' in sys.modules; "
        "import torch; print(imported, torch.get_num_threads())"
    )
    assert before == f"False {wanted}"  # torch was not imported to set the limit, and honours it when it starts
    after = run(f"import torch; from factlab.runtime import set_threads; set_threads({wanted}); print(torch.get_num_threads())")
    assert after == str(wanted)
    assert run("from factlab.runtime import set_threads; import torch; set_threads(0); print(torch.get_num_threads())") == str(
        default
    )


def test_a_rouge_job_does_not_import_torch() -> None:
    code = (
        # what a rouge job imports: its command module, the scorer's module, and the job's examples
        "import sys; import factlab.score.baseline_command, factlab.score.rouge; "
        "from factlab.score.commands import job_examples; print('torch' in sys.modules)"
    )
    assert run(code) == "False"


def test_negative_threads_are_refused() -> None:
    with pytest.raises(FactlabError, match="--threads must be >= 0"):
        set_threads(-1)

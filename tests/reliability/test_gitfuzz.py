"""A fuzzer of the user's git (issue 29): hypothesis's stateful testing interleaves real `wb` writes with the
user's own git commands and kill -9 at wb's fault points, and checks the invariants of
tests/reliability/gitfuzz.py after every step. Runs on the backend of the pass (WB_TEST_BACKEND).

Default suite: the seeds of SEEDS, a few examples of ~15 steps each (under a minute on one core). Slow tier:
`WB_FUZZ_MINUTES=10 pytest -m slow tests/reliability/test_gitfuzz.py` runs the seeds WB_FUZZ_BASE gives (29: the
same every run) until the time is up; WB_FUZZ_BASE=fresh draws new ones.
A failure prints its seed and the step list (every git and wb command with its exit code); replay it with
`WB_FUZZ_SEED=<seed> pytest -n 0 tests/reliability/test_gitfuzz.py::test_gitfuzz_replay` (docs/reliability.md).
"""

from __future__ import annotations

import os
import random
import time

import hypothesis.core
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.conftest import TEST_BACKEND

from .gitfuzz import GitFuzz

SEEDS = (15, 43, 45)  # the default suite's seeds (docs/reliability.md lists them)
REF_SEEDS = (15, 43)  # the same seeds, with the state on its own ref
STEPS = 15


def fuzz(seed: int, examples: int, ref: bool = False) -> None:
    traces: list[list[str]] = []

    class Machine(GitFuzz):
        ref_mode = ref

        def __init__(self) -> None:
            super().__init__()
            traces.append(self.trace)
            self.trace.append(f"# gitfuzz seed {seed}{' (state on wb-state)' if ref else ''}, example {len(traces)}")

    config = settings(max_examples=examples, stateful_step_count=STEPS, deadline=None, derandomize=False,
                      database=None, phases=[Phase.generate], print_blob=False,
                      suppress_health_check=list(HealthCheck))
    saved = hypothesis.core.global_force_seed
    hypothesis.core.global_force_seed = seed  # type: ignore[assignment]  # what --hypothesis-seed sets
    try:
        run_state_machine_as_test(Machine, settings=config, _min_steps=STEPS)  # no example cut short
    except BaseException as err:
        steps = "\n  ".join(traces[-1]) if traces else "(none)"
        raise AssertionError(f"gitfuzz seed {seed} failed: {err}\nthe steps (git and wb, with exit codes):\n  "
                             f"{steps}\nreplay: WB_FUZZ_SEED={seed} WB_FUZZ_EXAMPLES={examples}"
                             f"{' WB_FUZZ_REF=1' if ref else ''} pytest -n 0 "
                             "tests/reliability/test_gitfuzz.py::test_gitfuzz_replay") from err
    finally:
        hypothesis.core.global_force_seed = saved


@pytest.mark.parametrize("seed", SEEDS)
def test_gitfuzz_seed(seed: int) -> None:
    fuzz(seed, examples=int(os.environ.get("WB_FUZZ_EXAMPLES", "2")))


@pytest.mark.skipif(TEST_BACKEND != "files", reason="state on its own ref is the files backend's (docs/sync.md)")
@pytest.mark.parametrize("seed", REF_SEEDS)
def test_gitfuzz_ref_seed(seed: int) -> None:
    """The same steps with the state on its own ref (`wb init --ref wb-state`): the user's git never touches it."""
    fuzz(seed, examples=int(os.environ.get("WB_FUZZ_EXAMPLES", "2")), ref=True)


@pytest.mark.skipif("WB_FUZZ_SEED" not in os.environ, reason="replays WB_FUZZ_SEED (a seed a failure printed)")
def test_gitfuzz_replay() -> None:
    fuzz(int(os.environ["WB_FUZZ_SEED"]), examples=int(os.environ.get("WB_FUZZ_EXAMPLES", "2")),
         ref=os.environ.get("WB_FUZZ_REF") == "1")


@pytest.mark.slow
def test_gitfuzz_long() -> None:
    """Seeds until WB_FUZZ_MINUTES (default 10) are up; each failure names its seed. The seeds follow from
    WB_FUZZ_BASE (default 29, so CI's run is the same run every time: a failure there is a defect, never luck);
    WB_FUZZ_BASE=fresh draws new ones, as a person hunting for defects does."""
    deadline = time.monotonic() + 60 * float(os.environ.get("WB_FUZZ_MINUTES", "10"))
    base = os.environ.get("WB_FUZZ_BASE", "29")
    rng = random.Random() if base == "fresh" else random.Random(int(base))
    only = os.environ.get("WB_FUZZ_REF")  # "1": every seed with the state on its own ref; "0": none
    ref = only == "1"
    while time.monotonic() < deadline:  # else the seeds alternate between state on the branch and on its own ref
        fuzz(rng.randrange(1, 10**9), examples=int(os.environ.get("WB_FUZZ_EXAMPLES", "4")),
             ref=ref and TEST_BACKEND == "files")
        ref = only == "1" or (only != "0" and not ref)

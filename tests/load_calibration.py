"""How much slower than its quiet self the machine is right now: the timing tests' scale.

The timing tests bound answers by a deadline plus a margin (issue 20: the deadline
plus one second). On a machine busy with other work (issue 61: two `yes > /dev/null`
loops on 2 cores, load average 4 to 9) the service's processes get a share of a core,
and the same work takes two or three times as long: 17 tests failed (`assert 504 ==
200`, `assert 3.01 <= 1.5`) while the service kept its promises as far as its CPU
allowed.

`slowdown()` measures that share directly: this process spins for SPIN_S of wall time
and counts the CPU time it got; the machine's slowdown is wall / CPU (1.0 on an idle
core; 2.5 with two busy loops and two busy workers on 2 cores), clipped to [1, MAX].
It is taken when the service under test is idle, so it sees the outside load only.
Tests use it two ways, each saying which:
- `scaled(seconds)`: a deadline or a bound of work that only CPU limits (a deadline the
  test expects to be met with complete trees, the time a worker may take to finish a
  sentence): multiplied by the slowdown, so on a quiet machine (about 1.0) the test
  is exactly as strict as before and still fails when the service misses its
  deadline;
- the fixed margins of the service's promises (the deadline plus one second for the
  answer) stay as they are where the work is bounded by the deadline itself;
- `is_busy(f)`: past BUSY_AT, a test that expects the trees of a deadline-cut search
  (200) also accepts 504 `deadline_exceeded`, its time bound unchanged: the least
  effort after the deadline (one step of each stage of each sentence) is CPU work that
  the fixed 0.8 s grace holds on a quiet machine only. Below BUSY_AT (a quiet
  machine) such a test still fails on a 504.
"""
from __future__ import annotations

import os
import time

SPIN_S = 0.3          # long enough for the scheduler to share the cores out (CFS: ms)
MAX = 6.0             # beyond this the machine is too busy for timing tests to mean much
BUSY_AT = 1.5         # a slowdown from which the least effort may not fit in the grace


def slowdown(spin_s: float = SPIN_S) -> float:
    """wall / CPU seconds of a pure-Python spin of `spin_s` (at least 1, at most MAX);
    DEPTREE_TEST_SLOWDOWN overrides it (e.g. 1 to check the quiet bounds)."""
    forced = os.environ.get("DEPTREE_TEST_SLOWDOWN")
    if forced:
        return min(MAX, max(1.0, float(forced)))
    w0, c0 = time.perf_counter(), time.thread_time()
    n = 0
    while time.perf_counter() - w0 < spin_s:
        n += 1
    cpu = time.thread_time() - c0
    return min(MAX, max(1.0, (time.perf_counter() - w0) / max(cpu, 1e-3)))


def scaled(seconds: float, factor: float | None = None) -> float:
    """`seconds` of CPU-bound work as wall seconds on this machine now."""
    return seconds * (slowdown() if factor is None else factor)


def is_busy(factor: float) -> bool:
    """Whether a measured slowdown means a busy machine (see BUSY_AT)."""
    return factor >= BUSY_AT

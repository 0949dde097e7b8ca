"""How the worker processes of one machine share its cores: BLAS threads per process.

numpy's matrix products (the analyser's LSTMs, the contextual encoder) run on OpenBLAS,
which by default starts a thread for every core in every process. N workers on C cores
then run N x C threads that spin while they wait for each other: two workers of two
OpenBLAS threads each on 2 cores made the contextual tagger's steps 2.5 times as long
(issue 61, defect 1), and the redis backend's workers, started without their share,
answered the fault tests' load of 8-sentence mst requests in 8 to 11 s a request
instead of 0.4 s (a 504 at the 10 s deadline cap in CI, 2026-12-02).

`share_cores(n)` is called by whatever starts the workers (the local and the redis
backends of the gateway, `deptree worker`), before it spawns them: a spawned process
reads these variables when its BLAS loads.
"""
from __future__ import annotations

import os

# what sets the threads of numpy's matrix products (OpenBLAS, or another BLAS) and of
# OpenMP, read by a process when its BLAS loads
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def share_cores(workers: int) -> int:
    """Give each of `workers` processes its share of this machine's cores (the ones
    this process may run on) for BLAS threads, at least one, where the environment
    does not already say, and return it. Processes spawned after this inherit it."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else (os.cpu_count() or 1)
    threads = max(1, cores // max(1, workers))
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, str(threads))
    return threads

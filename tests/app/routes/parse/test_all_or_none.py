"""A request's jobs are all answered or none (issue 61, defect 1): once one job fails,
the gateway answers at once and withdraws the others (each worker's BLAS threads:
tests/worker/test_cores.py).

Before, a request of 256 sentences (16 jobs) whose first jobs knew at 1.7 s that they
could not end went on dispatching the others until its deadline, and they kept both
workers busy past the answer (tests/reliability/test_lookahead.py, with the server).
"""
from __future__ import annotations

import asyncio
import time

import pytest

from app.errors import ServiceError
from app.service import ParseService


def test_the_first_failure_is_raised_at_once_and_the_other_jobs_are_withdrawn():
    withdrawn = []

    async def slow(i: int) -> int:
        try:
            await asyncio.sleep(30)
            return i
        except asyncio.CancelledError:
            withdrawn.append(i)
            raise

    async def fails() -> int:
        await asyncio.sleep(0.05)
        raise ServiceError("deadline_exceeded", "this job cannot end in time", status=504)

    async def main() -> float:
        t0 = time.monotonic()
        with pytest.raises(ServiceError, match="cannot end in time"):
            await ParseService._all_or_none([slow(0), fails(), slow(2)])
        return time.monotonic() - t0

    took = asyncio.run(main())
    assert took < 10          # not the 30 s of the others (the margin: any busy machine)
    assert sorted(withdrawn) == [0, 2]


def test_replies_come_in_the_jobs_order():
    async def job(i: int, delay: float) -> int:
        await asyncio.sleep(delay)
        return i

    out = asyncio.run(ParseService._all_or_none([job(0, 0.03), job(1, 0.0), job(2, 0.01)]))
    assert out == [0, 1, 2]

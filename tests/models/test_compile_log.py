"""A numba compile is said in the log: once why, then its progress (issue 19: a fresh
install compiled for minutes in silence)."""
from __future__ import annotations

import logging

from numba import njit
from numba.core import event

import models.compile_log as compile_log


def test_compiles_are_logged_and_counted_calls_are_not(caplog, monkeypatch):
    monkeypatch.setattr(compile_log, "PROGRESS_EVERY_S", 0.0)
    log = compile_log.CompileLog()

    @njit
    def inner(x):
        return x * 2

    @njit
    def outer(x):
        return inner(x) + 1

    with caplog.at_level(logging.INFO, logger="models.compile_log"), \
            event.install_listener("numba:compile", log):
        assert outer(3) == 7
        n = log.count
        assert outer(4) == 9                      # compiled already: no event
    assert n == 2 and log.count == 2              # outer, and inner while typing it
    lines = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("numba is compiling kernels") and "outer" in m for m in lines)
    assert any(m.startswith("numba: 2 kernels compiled") for m in lines)
    assert log.seconds > 0


def test_the_kernel_packages_install_it():
    import models.graph  # noqa: F401

    n, s = compile_log.totals()
    assert n >= 0 and s >= 0
    assert compile_log._LOG is not None

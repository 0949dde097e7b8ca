"""The fixtures of tests/conftest.py stop what they start on every path (issue 20,
defect 10): on a fresh clone the session `server` gave up ("not ready after 180s") and
left `deptree serve` and both workers running after pytest had ended (2 GB, compiling)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def marked(mark: str) -> list[int]:
    """Processes whose environment carries DEPTREE_TEST_MARK=mark (inherited from the
    pytest run below by everything it starts)."""
    needle = f"DEPTREE_TEST_MARK={mark}".encode()
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        out.append(int(d))
            except OSError:
                continue
    return out


def test_server_fixture_that_fails_its_setup_leaves_no_process():
    mark = uuid.uuid4().hex
    env = {**os.environ, "DEPTREE_TEST_MARK": mark}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/support/failing_fixture_probe.py"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600, check=False)
    try:
        assert r.returncode == 1 and "workers fail" in r.stdout, r.stdout[-3000:]
        assert "1 error" in r.stdout, r.stdout[-3000:]
        t0 = time.monotonic()
        while (left := marked(mark)) and time.monotonic() - t0 < 10:
            time.sleep(0.2)
        assert not left, f"processes left by the failed fixture: {left}"
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)

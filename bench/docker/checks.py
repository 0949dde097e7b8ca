"""The Docker end-to-end run's report (`Report`: checks and figures, as Markdown) and
the waits and queries its steps share (`e2e.py`)."""
from __future__ import annotations

import logging
import socket
import subprocess
import time
from pathlib import Path

import httpx

logger = logging.getLogger("docker_e2e")

ROOT = Path(__file__).resolve().parents[2]
GATEWAY = "http://127.0.0.1:8000"
PROMETHEUS = "http://127.0.0.1:9090"
GRAFANA = "http://127.0.0.1:3000"


class Report:
    """Check results and figures, in order; Markdown at the end."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, bool | None, str]] = []
        self.sections: list[str] = []

    def add(self, what: str, ok: bool | None, detail: str) -> None:
        self.rows.append((what, ok, detail))
        logger.info("%s: %s %s", what, {True: "ok", False: "FAILED", None: "-"}[ok], detail)

    @property
    def failed(self) -> bool:
        return any(ok is False for _, ok, _ in self.rows)

    def markdown(self, header: str) -> str:
        out = [header, "", "| step | result | detail |", "| --- | --- | --- |"]
        for what, ok, detail in self.rows:
            mark = {True: "ok", False: "**FAILED**", None: "-"}[ok]
            out.append(f"| {what} | {mark} | {detail.replace('|', '/')} |")
        return "\n".join(out + [""] + self.sections) + "\n"


def sh(*cmd: str, timeout: float = 1800) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True,
                          timeout=timeout).stdout.strip()


def wait_for(what: str, check, timeout: float, every: float = 1.0):
    """check() until it returns a true value; its last value or error in the timeout."""
    t0, last = time.monotonic(), None
    while time.monotonic() - t0 < timeout:
        try:
            last = check()
            if last:
                return last
        except (httpx.HTTPError, KeyError, ValueError, AssertionError) as exc:
            last = exc
        time.sleep(every)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s (last: {last})")


def port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def prom_query(expr: str) -> list[dict]:
    r = httpx.get(PROMETHEUS + "/api/v1/query", params={"query": expr}, timeout=10)
    body = r.json()
    if r.status_code != 200 or body.get("status") != "success":
        raise ValueError(f"{expr}: {body}")
    data = body["data"]
    return data["result"] if data["resultType"] in ("vector", "matrix") else [data]

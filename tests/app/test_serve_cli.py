"""`deptree serve` / `deptree worker` registration and settings from the environment."""
from __future__ import annotations

import argparse
import subprocess
import sys

from app.core.config import Settings
from app.serve_cli import add_serve, add_worker


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="deptree")
    sub = p.add_subparsers(dest="command", required=True)
    add_serve(sub)
    add_worker(sub)
    return p


def test_flags():
    a = parser().parse_args(["serve", "--host", "0.0.0.0", "--port", "9000", "--workers", "2",
                             "--backend", "redis", "--redis-url", "redis://h:1/0"])
    assert (a.host, a.port, a.workers, a.backend, a.redis_url) == (
        "0.0.0.0", 9000, 2, "redis", "redis://h:1/0")
    a = parser().parse_args(["worker", "--redis-url", "redis://h:1/0", "--models", "en_ewt"])
    assert a.models == ["en_ewt"] and a.func.__name__ == "run_worker"


def test_settings_from_environment(monkeypatch):
    monkeypatch.setenv("DEPTREE_MODELS", "en_ewt,de_gsd")
    monkeypatch.setenv("DEPTREE_MODEL_DIRS", "/a:/b")
    monkeypatch.setenv("DEPTREE_MAX_SENTENCES", "10")
    monkeypatch.setenv("DEPTREE_DEFAULT_BUDGET", '{"greedy": {"restarts": 30}}')
    s = Settings()
    assert s.models == ["en_ewt", "de_gsd"] and [str(d) for d in s.model_dirs] == ["/a", "/b"]
    assert s.max_sentences == 10 and s.default_budget == {"greedy": {"restarts": 30}}


def test_serve_with_a_missing_model_fails_at_once(tmp_path):
    r = subprocess.run([sys.executable, "-m", "app.serve_cli", "serve", "--models", "xx_none",
                        "--port", "1"], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2 and "unknown model 'xx_none'" in r.stderr


def test_worker_needs_a_redis_url(monkeypatch):
    monkeypatch.delenv("DEPTREE_REDIS_URL", raising=False)
    r = subprocess.run([sys.executable, "-m", "app.serve_cli", "worker"], capture_output=True,
                       text=True, timeout=60, check=False)
    assert r.returncode == 2 and "--redis-url" in r.stderr


def test_model_that_cannot_load_is_reported_not_retried(serve, tmp_path):
    import contextlib
    import time

    import httpx

    broken = tmp_path / "broken"
    (broken / "en_ewt" / "graph").mkdir(parents=True)
    (broken / "en_ewt" / "pipeline.json").write_text('{"name": "en_ewt", "graph": "graph"}')
    srv = serve(workers=1, env={"DEPTREE_MODEL_DIRS": str(broken)}, wait=False)
    with srv.client() as c:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60:
            with contextlib.suppress(httpx.HTTPError):     # the server is still starting
                r = c.get("/ready")
                if r.json()["workers"]["error"]:
                    break
            time.sleep(0.2)
        assert r.status_code == 503 and "model.json" in r.json()["workers"]["error"]
        assert c.get("/health").json() == {"status": "ok"}
        r = c.post("/parse", json={"sentences": ["A cat."]})
        assert r.status_code == 503 and r.json()["error"]["code"] == "no_workers"
        assert "model.json" in r.json()["error"]["message"]
        r = c.get("/udpipe/models")                    # UDPipe's list: none to offer
        assert r.status_code == 503 and r.json()["error"]["code"] == "no_workers"

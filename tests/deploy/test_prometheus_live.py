"""A real Prometheus scrapes a real `deptree serve` and runs every dashboard and alert query.

Prometheus (Debian package `prometheus`, installed by .ci/run) gets the shipped
docker/prometheus/prometheus.yml with two changes only: the target is the test
server on loopback and the scrape/evaluation interval is 1 s. After two rounds of
parse requests (the second makes every rate() non-zero) each PromQL expression of
the dashboard and of alerts.yml must parse, the panels must return series, and the
decoding panels must return numbers, so the dashboard cannot silently show "No data".
"""
from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
import yaml
from conftest import free_port, stop_process
from deploy_files import (
    ALERTS_YML,
    DECODING_PANELS,
    DOCKER,
    EXEMPT_EMPTY,
    EXEMPT_TARGETS,
    PROMETHEUS_YML,
    load_yaml,
    panel_queries,
    promql,
    rule_queries,
    variable_queries,
)

DECODERS = ("greedy", "mst", "sampling")


class Prometheus:
    def __init__(self, proc: subprocess.Popen, url: str, log: Path) -> None:
        self.proc, self.url, self.log = proc, url, log

    def query(self, expr: str) -> dict:
        r = httpx.get(self.url + "/api/v1/query", params={"query": expr}, timeout=10)
        body = r.json()
        assert r.status_code == 200 and body["status"] == "success", (expr, body)
        return body["data"]

    def wait(self, what: str, check, timeout: float = 30):
        t0, last = time.monotonic(), None
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited:\n{self.log.read_text()[-3000:]}")
            try:
                last = check()
                if last:
                    return last
            except (httpx.HTTPError, AssertionError, KeyError) as exc:
                last = exc
            time.sleep(0.25)
        raise AssertionError(f"timeout waiting for {what}: {last}")


@pytest.fixture
def prometheus(tmp_path):
    """A factory: prometheus(target) starts Prometheus scraping `target` every second."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus is not installed (.ci/run installs the Debian package)")
    started: list[subprocess.Popen] = []

    def start(target: str) -> Prometheus:
        cfg = load_yaml(PROMETHEUS_YML)
        cfg["global"].update(scrape_interval="1s", evaluation_interval="1s")
        for job in cfg["scrape_configs"]:
            job["static_configs"][0]["targets"] = [target]
        conf_dir = tmp_path / "prometheus"
        conf_dir.mkdir()
        shutil.copy(ALERTS_YML, conf_dir / ALERTS_YML.name)       # rule_files are relative
        (conf_dir / "prometheus.yml").write_text(yaml.safe_dump(cfg))
        port = free_port()
        log = tmp_path / "prometheus.log"
        with open(log, "wb") as fh:
            proc = subprocess.Popen(
                [binary, f"--config.file={conf_dir / 'prometheus.yml'}",
                 f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                 f"--web.listen-address=127.0.0.1:{port}"],
                stdout=fh, stderr=subprocess.STDOUT)
        started.append(proc)
        prom = Prometheus(proc, f"http://127.0.0.1:{port}", log)
        prom.wait("/-/ready", lambda: httpx.get(prom.url + "/-/ready", timeout=2)
                  .status_code == 200)
        return prom

    yield start
    for p in started:
        stop_process(p)


def _traffic(client: httpx.Client) -> None:
    """Decodes with each decoder (new sentences: no cache hits), one hit, one error."""
    tag = uuid.uuid4().hex[:8]
    decoders = client.get("/models").json()["models"]["en_ewt"]["decoders"]
    for decoder in decoders:
        r = client.post("/parse", json={"decoder": decoder, "sentences": [
            f"The {decoder} cat {tag} sat on the mat .", ["A", "dog", tag, "barked", "."]]})
        assert r.status_code == 200, r.text
    if "neural" in decoders["mst"]["fields"]:           # the neural arc scores' series
        r = client.post("/parse", json={"decoder": "mst", "neural": 0.3,
                                        "sentences": [f"The neural cat {tag} sat ."]})
        assert r.status_code == 200, r.text
    hit = {"decoder": "greedy", "sentences": [f"Cached sentence {tag} ."]}
    assert client.post("/parse", json=hit).status_code == 200
    assert client.post("/parse", json=hit).json()["sentences"][0]["cached"]
    assert client.post("/parse", json={"sentences": []}).status_code == 422


def _values(data: dict) -> list[float]:
    if data["resultType"] == "vector":
        return [float(s["value"][1]) for s in data["result"]]
    if data["resultType"] == "matrix":
        return [float(v[1]) for s in data["result"] for v in s["values"]]
    return [float(data["result"][1])]


def test_every_dashboard_and_alert_query_on_a_live_server(serve, prometheus):
    srv = serve(workers=1)
    prom = prometheus(srv.url.removeprefix("http://"))
    prom.wait("the first scrape", lambda: prom.query('up{job="deptree"} == 1')["result"])
    with srv.client() as c:
        served = c.get("/models").json()["models"]["en_ewt"]["decoders"]
        # the tiny test model (DEPTREE_TEST_TINY) has no transition parser
        exempt = dict(EXEMPT_EMPTY)
        if "selectional" not in served:
            exempt["Branches taken per sentence (selectional)"] = "no selectional decoder"
        no_arcs = set() if "neural" in served["mst"]["fields"] else {
            (t, r) for t, r, e in panel_queries() if "deptree_arc_seconds" in e}
        _traffic(c)
        # every decoder's series exists before the second round, so rate() sees it grow
        prom.wait("decoder series", lambda: len(prom.query(
            "deptree_seconds_per_token_count")["result"]) >= len(DECODERS))
        _traffic(c)
        sent = c.get("/metrics").text
    assert "deptree_tokens_total" in sent

    def state() -> dict[tuple[str, str], list[float] | None]:
        """(panel, refId) -> values; None for a query that returned no series."""
        out = {}
        for title, ref, expr in panel_queries():
            vals = _values(prom.query(promql(expr)))
            out[(title, ref)] = vals or None
        return out

    def complete():
        s = state()
        empty = [k for k, v in s.items() if v is None
                 and k[0] not in exempt and k not in EXEMPT_TARGETS and k not in no_arcs]
        unmeasured = [k for k, v in s.items() if k[0] in DECODING_PANELS and k[0] not in exempt
                      and not any(math.isfinite(x) for x in v or ())]
        assert not empty and not unmeasured, {"empty": empty, "no finite value": unmeasured}
        return s

    s = prom.wait("every panel to show data", complete, timeout=30)
    # each decoder appears in the per-decoder panels
    by_decoder = prom.query(promql(next(e for t, r, e in panel_queries()
                                        if t == DECODING_PANELS[0] and r == "A")))["result"]
    assert {x["metric"]["decoder"] for x in by_decoder} >= set(DECODERS)
    for title in EXEMPT_EMPTY:
        assert any(k[0] == title for k in s), f"exempted panel {title!r} is gone"

    for name, expr in variable_queries():          # the $model variable lists en_ewt
        assert {x["metric"]["model"] for x in prom.query(expr)["result"]} == {"en_ewt"}, name

    # alert rules: each parses as an instant query, and Prometheus evaluates them cleanly
    for _name, expr in rule_queries():
        prom.query(expr)

    def rules_ok():
        groups = httpx.get(prom.url + "/api/v1/rules", timeout=5).json()["data"]["groups"]
        rules = [r for g in groups for r in g["rules"]]
        assert {r["name"] for r in rules} == {n for n, _ in rule_queries()}
        assert all(r["health"] == "ok" for r in rules), rules
        return rules

    rules = prom.wait("rule evaluation", rules_ok, timeout=15)
    firing = {r["name"] for r in rules if r.get("state") == "firing"}
    assert not firing & {"DeptreeWorkerDown", "DeptreeGatewayDown", "DeptreeCacheUnavailable"}

    # the image's healthcheck script agrees with the gateway's /ready
    env = {**os.environ, "DEPTREE_PORT": srv.url.rsplit(":", 1)[1]}
    assert _healthcheck("gateway", env) == 0
    assert _healthcheck("gateway", {**env, "DEPTREE_PORT": str(free_port())}) == 1


def _healthcheck(role: str, env: dict[str, str]) -> int:
    """Exit code of docker/healthcheck.py ROLE, run as the image runs it."""
    return subprocess.run([sys.executable, str(DOCKER / "healthcheck.py"), role], check=False,
                          env=env, cwd=DOCKER.parent, stderr=subprocess.DEVNULL).returncode


def test_worker_healthcheck_sees_the_heartbeat(redis_server, stream_worker):
    """docker/healthcheck.py worker: healthy once this host's worker heartbeats."""
    r = redis_server()
    env = {**os.environ, "DEPTREE_REDIS_URL": r.url}
    assert _healthcheck("worker", env) == 1                 # no worker yet
    proc = stream_worker({"DEPTREE_REDIS_URL": r.url})
    t0 = time.monotonic()
    while _healthcheck("worker", env) != 0:
        assert proc.poll() is None, "the worker exited"
        assert time.monotonic() - t0 < 60, "no heartbeat within 60 s"
        time.sleep(0.5)

"""The Grafana dashboard is valid provisioned-dashboard JSON, and docker-compose.yml,
the Dockerfile and prometheus.yml agree with the settings the code reads."""
from __future__ import annotations

import os
import re
import subprocess
from urllib.parse import urlparse

import pytest
from deploy_files import (
    ALERTS_YML,
    COMPOSE,
    DASHBOARDS,
    DOCKER,
    DOCKERFILE,
    MISSING_METRICS,
    PROMETHEUS_YML,
    PROVISIONING,
    all_panels,
    dashboard,
    load_yaml,
    metric_names,
    panel_queries,
    rule_queries,
)

from app.core.config import Settings

PANEL_TYPES = {"timeseries", "heatmap", "stat", "gauge", "bargauge", "table", "row", "text",
               "histogram", "barchart", "piechart", "state-timeline"}
SERVICES = {"redis", "gateway", "worker", "prometheus", "grafana"}


@pytest.fixture(scope="module")
def compose() -> dict:
    return load_yaml(COMPOSE)


@pytest.fixture(scope="module")
def datasource() -> dict:
    files = sorted((PROVISIONING / "datasources").glob("*.y*ml"))
    sources = [d for f in files for d in load_yaml(f)["datasources"]]
    assert len(sources) == 1, sources
    return sources[0]


def _env(service: dict) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(e.split("=", 1) for e in env)
    return {k: str(v) for k, v in env.items()}


def _default(value: str) -> str:
    """A compose value with its `${VAR:-default}` interpolated to the default."""
    return re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)


def _published(service: dict) -> list[tuple[str, int, int]]:
    """(address, host port, container port) of each published port, defaults applied;
    no address means every interface (0.0.0.0)."""
    out = []
    for p in service.get("ports", []):
        parts = _default(str(p)).split(":")
        addr = parts[0] if len(parts) == 3 else "0.0.0.0"
        out.append((addr, int(parts[-2]), int(parts[-1])))
    return out


def _mounts(service: dict) -> dict[str, str]:
    """container path -> host path (relative to the repository root)."""
    out = {}
    for v in service.get("volumes", []):
        src, dst = v.split(":")[:2]
        out[dst] = src
    return out


# ---- the dashboard ------------------------------------------------------------------
def test_dashboard_schema_fields():
    d = dashboard()
    assert d["uid"] == "deptree" and d["title"] == "deptree"
    assert isinstance(d["schemaVersion"], int) and d["schemaVersion"] >= 36
    assert "id" not in d or d["id"] is None          # provisioned dashboards carry no db id
    for key in ("panels", "templating", "time", "annotations", "tags", "refresh", "version"):
        assert key in d, key
    panels = all_panels(d)
    ids = [p["id"] for p in panels]
    assert all(isinstance(i, int) for i in ids) and len(ids) == len(set(ids)), ids
    for p in panels:
        assert p["type"] in PANEL_TYPES, p["type"]
        assert p["title"].strip()
        g = p["gridPos"]
        assert {"h", "w", "x", "y"} <= set(g) and all(isinstance(g[k], int) for k in g)
        assert g["w"] > 0 and g["h"] > 0 and 0 <= g["x"] and g["x"] + g["w"] <= 24
        refs = [t["refId"] for t in p.get("targets", [])]
        assert len(refs) == len(set(refs)), (p["title"], refs)
        for t in p.get("targets", []):
            assert t["expr"].strip(), (p["title"], t["refId"])


def test_datasource_refs_resolve(datasource):
    d = dashboard()
    refs = [p["datasource"] for p in all_panels(d) if p["type"] != "row"]
    refs += [t["datasource"] for p in all_panels(d) for t in p.get("targets", [])
             if "datasource" in t]
    refs += [v["datasource"] for v in d["templating"]["list"] if "datasource" in v]
    assert refs
    for ref in refs:
        assert ref == {"type": datasource["type"], "uid": datasource["uid"]}, ref


def test_dashboard_covers_the_issue_panels():
    exprs = " ".join(e for _, _, e in panel_queries())
    want = ["histogram_quantile(0.5, sum by (decoder, le) (rate(deptree_seconds_per_token_bucket",
            "histogram_quantile(0.95, sum by (decoder, le) "
            "(rate(deptree_seconds_per_token_bucket",
            "deptree_decode_seconds_bucket", "deptree_request_seconds_count",
            "deptree_errors_total",
            "deptree_tokens_total", "deptree_cache_hits_total", "deptree_cache_misses_total",
            'deptree_restarts_used_bucket{decoder="greedy"',
            'deptree_branches_taken_bucket{decoder="selectional"', "deptree_queue_depth",
            "deptree_in_flight", "deptree_workers_up",
            "sum by (tagger, le) (rate(deptree_tag_seconds_per_token_bucket",
            "sum by (le) (rate(deptree_arc_seconds_per_token_bucket"]
    for w in want:
        assert w in exprs, w


def test_every_metric_queried_exists():
    """Dashboard and alerts read only metrics app/metrics.py defines (or listed as missing)."""
    from prometheus_client.metrics import MetricWrapperBase

    from app import metrics

    defined = {m._name for m in vars(metrics).values() if isinstance(m, MetricWrapperBase)}
    used = set().union(*(metric_names(e) for _, _, e in panel_queries()),
                       *(metric_names(e) for _, e in rule_queries()))
    assert used - defined == MISSING_METRICS, sorted(used - defined)
    assert not MISSING_METRICS & defined, "a missing metric now exists: drop it from the list"


# ---- grafana provisioning ----------------------------------------------------------
def test_grafana_provisioning_matches_compose(compose, datasource):
    g = compose["services"]["grafana"]
    mounts = _mounts(g)
    assert mounts["/etc/grafana/provisioning"] == "./docker/grafana/provisioning"
    provider = load_yaml(PROVISIONING / "dashboards" / "deptree.yml")["providers"][0]
    host_dir = mounts[provider["options"]["path"]]
    assert (COMPOSE.parent / host_dir).resolve() == DASHBOARDS.resolve()
    home = _env(g)["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home == provider["options"]["path"] + "/deptree.json"
    # the datasource URL is the prometheus service on the port Prometheus listens on
    url = urlparse(datasource["url"])
    assert url.hostname == "prometheus" and url.hostname in compose["services"]
    prom = compose["services"]["prometheus"]
    assert [(p, c) for _, p, c in _published(prom)] == [(url.port, url.port)]
    assert not any(a.startswith("--web.listen-address") for a in prom["command"])   # 9090
    assert url.port == 9090
    assert _mounts(prom)["/etc/prometheus"] == "./docker/prometheus"


# ---- compose against the settings -----------------------------------------------------
def test_compose_services_and_dependencies(compose):
    s = compose["services"]
    assert set(s) == SERVICES
    for name, svc in s.items():
        assert "healthcheck" in svc, name
    assert s["gateway"]["depends_on"]["redis"]["condition"] == "service_healthy"
    assert s["worker"]["depends_on"]["redis"]["condition"] == "service_healthy"
    assert s["grafana"]["depends_on"]["prometheus"]["condition"] == "service_healthy"
    # scalable: no fixed container name, no published port
    assert "container_name" not in s["worker"] and "ports" not in s["worker"]
    assert s["gateway"]["command"] == ["serve"] and s["worker"]["command"] == ["worker"]


def test_compose_env_vars_are_settings(compose, monkeypatch):
    fields = set(Settings.model_fields)
    for name in ("gateway", "worker"):
        env = _env(compose["services"][name])
        for key in env:
            assert key.startswith("DEPTREE_"), key
            assert key[len("DEPTREE_"):].lower() in fields, f"{name}: {key} is no setting"
    # the scripts baked into the image read settings too
    for script in DOCKER.glob("*.py"):
        for key in re.findall(r"DEPTREE_[A-Z_]+", script.read_text()):
            assert key[len("DEPTREE_"):].lower() in fields, f"{script.name}: {key}"


def _settings_from(env: dict[str, str], monkeypatch) -> Settings:
    for k in list(os.environ):
        if k.startswith("DEPTREE_"):
            monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return Settings(_env_file=None)


def _dockerfile_env() -> dict[str, str]:
    text = DOCKERFILE.read_text().split("AS runtime", 1)[1]
    return dict(re.findall(r"(DEPTREE_[A-Z_]+)=(\S+)", text))


def test_gateway_settings(compose, monkeypatch):
    s = compose["services"]
    image_env = _dockerfile_env()
    gw = _settings_from({**image_env, **_env(s["gateway"])}, monkeypatch)
    assert gw.backend == "redis" and gw.workers == 0 and gw.host == "0.0.0.0"
    assert [(p, c) for _, p, c in _published(s["gateway"])] == [(gw.port, gw.port)]
    assert re.search(rf"^EXPOSE {gw.port}$", DOCKERFILE.read_text(), re.MULTILINE)
    # the redis URL names the redis service on the port redis-server listens on
    url = urlparse(gw.redis_url)
    assert url.hostname == "redis" and url.port == 6379
    assert "--port" not in s["redis"]["command"]                      # default 6379
    # Prometheus scrapes the gateway on that port, at the path /metrics is served
    job = load_yaml(PROMETHEUS_YML)["scrape_configs"][0]
    assert job["static_configs"][0]["targets"] == [f"gateway:{gw.port}"]
    assert job.get("metrics_path", "/metrics") == "/metrics"


def test_worker_settings_match_gateway(compose, monkeypatch):
    s = compose["services"]
    gw = _settings_from(_env(s["gateway"]), monkeypatch)
    wk = _settings_from(_env(s["worker"]), monkeypatch)
    assert wk.redis_url == gw.redis_url and wk.stream == gw.stream and wk.models == gw.models


def test_redis_is_a_bounded_lru_cache(compose):
    r = compose["services"]["redis"]
    cmd = r["command"]
    assert cmd[cmd.index("--maxmemory-policy") + 1] == "volatile-lru"
    maxmem = cmd[cmd.index("--maxmemory") + 1]
    assert int(maxmem.removesuffix("mb")) < int(r["mem_limit"].removesuffix("m"))


# ---- issue 20, defect 6: the stack is closed by default ------------------------------
REQUIRED = re.compile(r"^\$\{(\w+):\?[^}]+\}$")        # ${VAR:?message}: no default


def test_compose_is_closed_by_default(compose):
    """Published on 127.0.0.1 only; Grafana's password from .env (ignored by git) with
    no default and no anonymous viewers; Redis with a password every client uses."""
    s = compose["services"]
    for name, svc in s.items():
        for addr, port, _ in _published(svc):
            assert addr == "127.0.0.1", f"{name} publishes {port} on {addr}"
    g = _env(s["grafana"])
    assert REQUIRED.match(g["GF_SECURITY_ADMIN_PASSWORD"]), g["GF_SECURITY_ADMIN_PASSWORD"]
    assert g["GF_AUTH_ANONYMOUS_ENABLED"] == "false"
    ignored = subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=COMPOSE.parent,
                             check=False)
    assert ignored.returncode == 0, ".env (the compose secrets) is not git-ignored"
    cmd = s["redis"]["command"]
    password = cmd[cmd.index("--requirepass") + 1]
    var = REQUIRED.match(password).group(1)
    assert _env(s["redis"])["REDISCLI_AUTH"] == password        # the healthcheck's ping
    for name in ("gateway", "worker"):             # (a "?" would end a URL's authority)
        url = urlparse(_env(s[name])["DEPTREE_REDIS_URL"])
        assert url.password == f"${{{var}}}" and url.hostname == "redis", name
    example = (DOCKER / "env.example").read_text()
    for key in (var, REQUIRED.match(g["GF_SECURITY_ADMIN_PASSWORD"]).group(1)):
        assert re.search(rf"^{key}=$", example, re.MULTILINE), key


def test_compose_eviction_policy_is_the_one_the_docs_and_the_gateway_want(compose):
    cmd = compose["services"]["redis"]["command"]
    policy = cmd[cmd.index("--maxmemory-policy") + 1]
    assert policy.startswith("volatile-")         # app/dispatch/redis_stream.py warns otherwise
    docs = (COMPOSE.parent / "docs" / "deploy.md").read_text()
    assert f"`{policy}`" in docs and "allkeys-lru" not in docs


def _seconds(duration: str) -> float:
    """A compose duration such as "45s", "1m30s"."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    return sum(float(n) * units[u] for n, u in re.findall(r"([\d.]+)(ms|h|m|s)", duration))


def test_compose_stop_grace_period_outlasts_the_drain(compose):
    from app.serve_cli import DRAIN_S

    for name in ("gateway", "worker"):
        grace = compose["services"][name].get("stop_grace_period", "10s")
        assert _seconds(grace) > DRAIN_S + 5, f"{name}: {grace} cuts the {DRAIN_S} s drain"


def test_base_image_is_pinned_by_digest():
    text = DOCKERFILE.read_text()
    args = dict(re.findall(r"^ARG (\w+)=(\S+)$", text, re.MULTILINE))
    images = [args.get(m.strip("${}"), m) for m in
              re.findall(r"^FROM (\S+)", text, re.MULTILINE)]
    assert images
    for image in images:
        assert re.fullmatch(r"[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}", image), image


def test_rule_file_is_the_one_prometheus_loads():
    cfg = load_yaml(PROMETHEUS_YML)
    assert [(PROMETHEUS_YML.parent / f).resolve() for f in cfg["rule_files"]] == [
        ALERTS_YML.resolve()]

"""Readers of the deployment files the tests in tests/deploy check (no fixtures here).

`panel_queries()` and `rule_queries()` list every PromQL expression Grafana and
Prometheus would run; `promql(expr)` replaces Grafana's variables with what they
stand for on a short-scrape test Prometheus.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = DOCKER / "Dockerfile"
PROMETHEUS_YML = DOCKER / "prometheus" / "prometheus.yml"
ALERTS_YML = DOCKER / "prometheus" / "alerts.yml"
PROVISIONING = DOCKER / "grafana" / "provisioning"
DASHBOARDS = DOCKER / "grafana" / "dashboards"
DASHBOARD = DASHBOARDS / "deptree.json"

# Panels allowed to be empty on a fresh `deptree serve`, each with its reason.
EXEMPT_EMPTY: dict[str, str] = {}
# Series that only appear after an event the test does not provoke.
EXEMPT_TARGETS = {
    # deptree_worker_restarts_total has no series until a worker is replaced.
    ("Workers up", "B"): "no worker restarts in the test",
}
# Metrics the dashboard uses that app/metrics.py does not define yet.
MISSING_METRICS: set[str] = set()
# Panels about decoding: they must show numbers, not only series.
DECODING_PANELS = (
    "Seconds per token by decoder (p50 / p95)",
    "Decode latency by decoder (p50 / p95 / p99)",
    "Throughput: tokens per second by decoder",
    "Restarts used per sentence (greedy)",
    "Branches taken per sentence (selectional)",
)

GRAFANA_VARS = {"$__rate_interval": "30s", "$__interval": "5s", "$__range": "5m",
                "${model}": ".*", "$model": ".*"}


def load_yaml(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def all_panels(dash: dict) -> list[dict]:
    """Panels, with those nested in collapsed rows."""
    out = []
    for p in dash["panels"]:
        out.append(p)
        out.extend(p.get("panels", []))
    return out


def panel_queries(dash: dict | None = None) -> list[tuple[str, str, str]]:
    """(panel title, refId, expr) of every panel target."""
    dash = dash or dashboard()
    return [(p["title"], t["refId"], t["expr"])
            for p in all_panels(dash) for t in p.get("targets", [])]


def variable_queries(dash: dict | None = None) -> list[tuple[str, str]]:
    """(variable name, PromQL) of query variables: label_values(EXPR, label) -> EXPR."""
    dash = dash or dashboard()
    out = []
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q.strip())
        out.append((v["name"], m.group(1) if m else q))
    return out


def rule_queries() -> list[tuple[str, str]]:
    """(alert or record name, expr) of every rule in alerts.yml."""
    return [(r.get("alert") or r.get("record"), r["expr"])
            for g in load_yaml(ALERTS_YML)["groups"] for r in g["rules"]]


def promql(expr: str, variables: dict[str, str] | None = None) -> str:
    """`expr` with Grafana's variables replaced (longest names first); `variables`
    overrides GRAFANA_VARS (e.g. a longer $__rate_interval for a 15 s scrape)."""
    values = {**GRAFANA_VARS, **(variables or {})}
    for k in sorted(values, key=len, reverse=True):
        expr = expr.replace(k, values[k])
    assert "$" not in expr, f"unknown Grafana variable in {expr!r}"
    return expr


def dockerfile_arg(name: str, dockerfile: Path = DOCKERFILE) -> str:
    """Default value of `ARG name=...` in the Dockerfile ('' when it has none)."""
    m = re.search(rf"^ARG {name}=(\S*)", dockerfile.read_text(encoding="utf-8"), re.MULTILINE)
    return m.group(1) if m else ""


def metric_names(expr: str) -> set[str]:
    """deptree_* metric families an expression reads (suffixes _bucket/_count/_sum/_total cut)."""
    names = set(re.findall(r"\bdeptree_[a-z0-9_]+", expr))
    return {re.sub(r"_(bucket|count|sum|total)$", "", n) for n in names}

"""The monitoring checks of the Docker end-to-end run (`e2e.py`): Prometheus scrapes the
gateway and both workers' series, Grafana serves the provisioned dashboard, and every
panel query returns series once traffic of every decoder went through. Imported by
e2e.py, which puts tests/deploy (the dashboard readers) on sys.path first."""
from __future__ import annotations

import uuid

import httpx
from deploy_files import DASHBOARD, EXEMPT_TARGETS, dashboard, panel_queries, promql

from bench.docker.checks import GATEWAY, GRAFANA, ROOT, Report, prom_query, sh, wait_for
from bench.docker.compose import Compose

# Grafana's $__rate_interval for a 15 s scrape (timeInterval in the datasource): 4 x 15 s
RATE_VARS = {"$__rate_interval": "1m", "$__interval": "15s"}


def traffic(client: httpx.Client, decoders: dict) -> None:
    """New sentences with every decoder (and the neural arc scores where served), one
    cache hit: each dashboard panel's series moves."""
    tag = uuid.uuid4().hex[:8]
    for decoder in decoders:
        body = {"decoder": decoder, "sentences": [f"The {decoder} cat {tag} sat on the mat ."]}
        client.post("/parse", json=body).raise_for_status()
    if "neural" in decoders.get("mst", {}).get("fields", {}):
        client.post("/parse", json={"decoder": "mst", "neural": 0.3,
                                    "sentences": [f"A neural dog {tag} barked ."]})
    hit = {"sentences": [f"Cached {tag} sentence ."]}
    client.post("/parse", json=hit)
    client.post("/parse", json=hit)
    client.post("/parse", json={"sentences": []})           # a 422: the errors panel


def scrapes(rep: Report, compose: Compose) -> None:
    up = wait_for("Prometheus scrapes the gateway",
                  lambda: prom_query('up{job="deptree"} == 1'), timeout=120)
    rep.add("Prometheus scrapes the gateway", True,
            ", ".join(x["metric"]["instance"] for x in up))
    hosts = {sh("docker", "inspect", "-f", "{{.Config.Hostname}}", i): i[:12]
             for i in compose.ids("worker")}

    def seen():
        names = {x["metric"]["worker"] for x in prom_query("deptree_worker_up == 1")}
        return {h for h in hosts if any(n.startswith(h + ":") for n in names)} == set(hosts)
    try:
        wait_for("both workers' series", seen, timeout=120)
        rep.add("workers' series in Prometheus", True,
                f"deptree_worker_up == 1 for the {len(hosts)} worker containers "
                f"{sorted(hosts.values())}")
    except TimeoutError as exc:
        rep.add("workers' series in Prometheus", False, str(exc))


def grafana_dashboard(rep: Report, password: str | None) -> dict:
    """The dashboard as Grafana serves it, or the provisioned file without Grafana."""
    if password is None:
        rep.add("Grafana", None, "skipped: no grafana/grafana image here (no Debian, PyPI or "
                "npm package); the panel queries come from " + str(DASHBOARD.relative_to(ROOT)))
        return dashboard()
    auth = ("admin", password)
    wait_for("Grafana /api/health", lambda: httpx.get(GRAFANA + "/api/health", timeout=5)
             .status_code == 200, timeout=180)

    def provisioned():
        r = httpx.get(GRAFANA + "/api/dashboards/uid/deptree", auth=auth, timeout=10)
        return r.json()["dashboard"] if r.status_code == 200 else None
    dash = wait_for("the provisioned dashboard", provisioned, timeout=120)
    same = len(panel_queries(dash)) == len(panel_queries())
    rep.add("Grafana serves the provisioned dashboard", same,
            f"uid {dash['uid']}, {len(panel_queries(dash))} panel queries")
    return dash


def panels(rep: Report, dash: dict) -> None:
    with httpx.Client(base_url=GATEWAY, timeout=60) as c:
        decoders = c.get("/models").json()["models"]["en_ewt"]["decoders"]
        queries = [(t, ref, promql(e, RATE_VARS)) for t, ref, e in panel_queries(dash)]
        if "neural" not in decoders.get("mst", {}).get("fields", {}):
            queries = [q for q in queries if "deptree_arc_seconds" not in q[2]]
        wanted = [q for q in queries if (q[0], q[1]) not in EXEMPT_TARGETS]
        state: dict[tuple[str, str], int] = {}

        def complete():
            traffic(c, decoders)          # a fresh round each try: rate() over 1 m moves
            for title, ref, expr in wanted:
                state[(title, ref)] = len(prom_query(expr))
            return all(state.values())
        try:
            wait_for("every panel query returns series", complete, timeout=240, every=10)
            ok = True
        except TimeoutError:
            ok = False
    empty = [f"{t} ({r})" for (t, r), n in state.items() if not n]
    rep.add("dashboard panel queries against Prometheus", ok,
            f"{sum(1 for n in state.values() if n)}/{len(wanted)} return series"
            + (f"; empty: {empty}" if empty else "")
            + (f"; exempt: {sorted(EXEMPT_TARGETS)}" if EXEMPT_TARGETS else ""))
    rep.sections.append("Panel queries (series returned):\n\n| panel | ref | series |\n"
                        "| --- | --- | --- |\n" + "\n".join(
                            f"| {t} | {r} | {n} |" for (t, r), n in state.items()) + "\n")

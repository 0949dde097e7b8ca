"""End-to-end run of the Docker image and the compose stack (issue 19, part 3).

Builds the image, starts the stack (Redis, the gateway, 2 worker containers,
Prometheus, and Grafana where its image can be had), then checks:
- POST /parse through the gateway answers a tree;
- Prometheus scrapes the gateway, and the series of both worker containers reach it
  (workers report through the gateway: docker/prometheus/prometheus.yml);
- the provisioned dashboard, loaded through Grafana's HTTP API where Grafana runs
  (else from docker/grafana/dashboards/, saying so): each panel query is evaluated
  against the stack's Prometheus and must return series;
- a worker container killed (SIGKILL) under load loses no request: every request
  answers 200;
then tears the stack down. It prints a Markdown report (image size, build time,
time to ready, every check) and exits 1 when a check failed.

--local is for machines that reach a Debian mirror and PyPI from the host but not
Docker Hub (containers there lack the host's CA bundle): base images from Debian's
packages (docker/local/images.sh), wheels fetched on the host (bench/docker/wheelhouse.py),
and docker-compose.local.yml on top of docker-compose.yml. Secrets (Redis and Grafana
passwords) go in an env file made for the run and removed after it.

Usage (repository root, a running Docker engine, root or the docker group):
    python bench/docker/e2e.py [--local] [--cached] [--keep] [--out runs/docker_e2e.md]
"""
from __future__ import annotations

import argparse
import datetime
import logging
import os
import platform
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[2]
# the deploy tests' dashboard readers and the fault tests' load driver
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "deploy"), str(ROOT / "tests" / "reliability")]

from deploy_files import (
    DASHBOARD,
    EXEMPT_TARGETS,
    dashboard,
    dockerfile_arg,
    panel_queries,
    promql,
)
from load_driver import Load, batches, check_answered

from bench.docker.compose import Compose
from bench.docker.wheelhouse import fill

logger = logging.getLogger("docker_e2e")

GATEWAY = "http://127.0.0.1:8000"
PROMETHEUS = "http://127.0.0.1:9090"
GRAFANA = "http://127.0.0.1:3000"
WORKERS = 2
# Grafana's $__rate_interval for a 15 s scrape (timeInterval in the datasource): 4 x 15 s
RATE_VARS = {"$__rate_interval": "1m", "$__interval": "15s"}


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


# ---- steps -------------------------------------------------------------------------
def build(rep: Report, compose: Compose, local: bool, cached: bool, skip: bool) -> str:
    cfg = compose.config()["services"]["gateway"]
    args = (cfg.get("build") or {}).get("args") or {}
    if skip:
        rep.add("docker build", None, f"skipped (--skip-build): the image {cfg['image']} as it is")
        return cfg["image"]
    if local:
        t0 = time.monotonic()
        sh(str(ROOT / "docker" / "local" / "images.sh"))
        rep.add("base images from Debian packages (docker/local/images.sh)", True,
                f"{time.monotonic() - t0:.0f} s (0 when present)")
        t0 = time.monotonic()
        pins = fill(ROOT, args["PYTHON_IMAGE"], ROOT / "docker" / "wheels",
                    dockerfile_arg("REQUIREMENTS"))
        rep.add("wheels on the host (bench/docker/wheelhouse.py)", True,
                f"{len(pins)} wheels in {time.monotonic() - t0:.0f} s")
    image = cfg["image"]
    cmd = ["docker", "build", "-f", "docker/Dockerfile", "-t", image]
    cmd += [] if cached else ["--no-cache"]
    for k, v in sorted(args.items()):
        cmd += ["--build-arg", f"{k}={v}"]
    t0 = time.monotonic()
    log = Path(tempfile.gettempdir()) / "deptree-docker-build.log"
    with open(log, "w") as fh:
        r = subprocess.run([*cmd, "."], cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT,
                           check=False, timeout=3600)
    seconds = time.monotonic() - t0
    rep.add("docker build" + (" (cached layers allowed)" if cached else " (--no-cache)"),
            r.returncode == 0, f"{seconds:.0f} s; `{' '.join(cmd)} .`; log {log}")
    if r.returncode:
        raise RuntimeError(f"docker build failed: {log}")
    size = int(sh("docker", "image", "inspect", "-f", "{{.Size}}", image))
    rep.add("image size (goal <= 600 MB)", size <= 600e6, f"{size / 1e6:.0f} MB ({image})")
    layers = sh("docker", "history", "--no-trunc", "--format", "{{.Size}}\t{{.CreatedBy}}",
                image).splitlines()
    rep.sections.append("Image layers (docker history):\n\n```\n" + "\n".join(
        f"{s:>9}  {c[:110]}" for s, _, c in (x.partition("\t") for x in layers)) + "\n```\n")
    return image


def start(rep: Report, compose: Compose) -> float:
    t0, wall0 = time.monotonic(), time.time()
    compose.run("up", "-d", "--no-build", "--scale", f"worker={WORKERS}")

    def ready():
        r = httpx.get(GATEWAY + "/ready", timeout=5)
        return r.status_code == 200 and r.json()["workers"]["workers_up"] >= WORKERS
    wait_for("gateway /ready with 2 workers", ready, timeout=600, every=0.5)
    seconds = time.monotonic() - t0
    started = {}
    for service in ("redis", "gateway", "worker", "prometheus"):
        for i, cid in enumerate(compose.ids(service)):
            iso = sh("docker", "inspect", "-f", "{{.State.StartedAt}}", cid)
            started[f"{service}{i + 1 if service == 'worker' else ''}"] = (
                datetime.datetime.fromisoformat(iso[:26].rstrip("Z")).replace(
                    tzinfo=datetime.UTC).timestamp() - wall0)
    rep.add("time to ready", True,
            f"{seconds:.1f} s from `compose up` to /ready 200 with {WORKERS} workers up; "
            "containers started at " + ", ".join(f"{k} +{v:.0f} s" for k, v in started.items())
            + f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return seconds


def parse_once(rep: Report) -> None:
    words = ["The", "cat", "sat", "on", "the", "mat", "."]
    r = httpx.post(GATEWAY + "/parse", json={"sentences": [words]}, timeout=60)
    ok = r.status_code == 200
    detail = f"HTTP {r.status_code}"
    if ok:
        toks = r.json()["sentences"][0]["tokens"]
        heads = [t["head"] for t in toks]
        ok = len(toks) == len(words) and heads.count(0) == 1
        detail += f"; heads {heads}"
    rep.add("POST /parse through the gateway", ok, detail)


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


def workers_up() -> int:
    return httpx.get(GATEWAY + "/ready", timeout=5).json()["workers"]["workers_up"]


def kill_worker(rep: Report, compose: Compose) -> None:
    """SIGKILL a worker container's process from the host, as the kernel's OOM killer
    or a crash would (`docker kill` counts as a manual stop: no restart)."""
    ids = compose.ids("worker")
    victim, survivor = ids[0], ids[1]
    pid = int(sh("docker", "inspect", "-f", "{{.State.Pid}}", victim))
    load = Load(GATEWAY, n_threads=4, body_for=batches(n_per=2), timeout=120).start()
    load.wait_done(20, timeout=180)
    before = len(load.outcomes)
    os.kill(pid, signal.SIGKILL)
    t_kill = time.monotonic()
    load.wait_done(before + 60, timeout=180)
    outcomes = load.finish(timeout=180, stop=True)
    try:
        check_answered(outcomes, bound_s=120)
        ok, why = True, ""
    except AssertionError as exc:
        ok, why = False, f"; {exc}"
    after = len(outcomes) - before
    reclaimed = subprocess.run(["docker", "logs", survivor], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, check=False,
                               timeout=60).stdout.count("reclaimed")
    rep.add("worker container killed under load", ok,
            f"{len(outcomes)} requests ({before} before the SIGKILL, {after} after, over "
            f"{time.monotonic() - t_kill:.0f} s), answers {load.statuses()}; the survivor's "
            f"log names {reclaimed} reclaimed job(s){why}")
    try:
        wait_for("the killed worker back", lambda: workers_up() >= WORKERS, timeout=300)
        back = True
    except TimeoutError:
        back = False
    state = sh("docker", "inspect", "-f", "{{.State.Status}}, restarts {{.RestartCount}}", victim)
    rep.add("killed worker restarted (restart: unless-stopped)", back,
            f"container {state}; workers_up {workers_up()} "
            f"{time.monotonic() - t_kill:.0f} s after the kill")


def teardown(rep: Report, compose: Compose) -> None:
    compose.down()
    left = sh("docker", "ps", "-aq", "--filter",
              f"label=com.docker.compose.project={compose.project}")
    rep.add("compose down -v", not left, "no container left" if not left else f"left: {left}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--local", action="store_true",
                    help="no Docker Hub: Debian base images, host wheels, docker-compose.local.yml")
    ap.add_argument("--cached", action="store_true", help="build without --no-cache")
    ap.add_argument("--skip-build", action="store_true",
                    help="check the stack with the image built before")
    ap.add_argument("--keep", action="store_true", help="leave the stack running")
    ap.add_argument("--project", default="deptree-e2e", help="compose project name")
    ap.add_argument("--out", help="write the Markdown report here too")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        stream=sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    for port in (8000, 9090, 3000):
        if not port_free(port):
            sys.exit(f"port {port} is taken on 127.0.0.1: stop what listens there first")
    rep = Report()
    files = [ROOT / "docker-compose.yml"] + ([ROOT / "docker-compose.local.yml"]
                                              if args.local else [])
    # with Docker Hub compose pulls Grafana; --local starts it only where its image is here
    grafana_image = yaml.safe_load(files[0].read_text())["services"]["grafana"]["image"]
    have_grafana = not args.local or subprocess.run(
        ["docker", "image", "inspect", grafana_image], capture_output=True,
        check=False).returncode == 0
    passwords = {"REDIS_PASSWORD": secrets.token_urlsafe(18),
                 "GRAFANA_ADMIN_PASSWORD": secrets.token_urlsafe(18)}
    with tempfile.TemporaryDirectory(prefix="deptree-e2e-") as tmp:
        env_file = Path(tmp) / "e2e.env"
        env_file.write_text("".join(f"{k}={v}\n" for k, v in passwords.items()))
        env_file.chmod(0o600)
        compose = Compose(ROOT, args.project, files, env_file,
                          profiles=("grafana",) if args.local and have_grafana else ())
        try:
            build(rep, compose, args.local, args.cached, args.skip_build)
            start(rep, compose)
            parse_once(rep)
            scrapes(rep, compose)
            dash = grafana_dashboard(rep, passwords["GRAFANA_ADMIN_PASSWORD"]
                                     if have_grafana else None)
            panels(rep, dash)
            kill_worker(rep, compose)
        except Exception as exc:  # reported, then torn down
            logger.exception("stopped")
            rep.add("run", False, f"stopped by {type(exc).__name__}: {exc}")
        finally:
            if not args.keep:
                teardown(rep, compose)
            compose_version = compose.version()
            compose.close()
    header = (f"## Docker end-to-end ({datetime.date.today()}, {platform.node()}, "
              f"{os.cpu_count()} cores)\n\n"
              f"Command: `python bench/docker/e2e.py{' --local' if args.local else ''}"
              f"{' --cached' if args.cached else ''}{' --skip-build' if args.skip_build else ''}`;"
              f" Docker engine "
              f"{sh('docker', 'version', '-f', '{{.Server.Version}}')}, {compose_version}.")
    text = rep.markdown(header)
    sys.stdout.write(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[2]
# the deploy tests' dashboard readers and the fault tests' load driver
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "deploy"), str(ROOT / "tests" / "reliability")]

from deploy_files import dockerfile_arg
from load_driver import Load, batches, check_answered

from bench.docker.checks import GATEWAY, Report, logger, port_free, sh, wait_for
from bench.docker.compose import Compose
from bench.docker.monitoring import grafana_dashboard, panels, scrapes
from bench.docker.wheelhouse import fill

WORKERS = 2


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

"""`deptree serve` and `deptree worker`: argparse subcommands over plain functions.

`add_serve(subparsers)` and `add_worker(subparsers)` register the subcommands on
the `deptree` parser (deptree/cli/ calls them); `python -m app.serve_cli serve|worker`
works on its own too. Flags override the `DEPTREE_*` settings. Imports of the web
stack happen inside the run functions, so registering the commands costs nothing
and `PROMETHEUS_MULTIPROC_DIR` can be set before prometheus-client is loaded.

`deptree serve --gateways N` (redis backend only: see `Settings.gateways`) runs N
gateway processes on one port: each binds it with SO_REUSEPORT, so the kernel spreads
new connections over them, and the parent holds the port, restarts a gateway that dies
and passes SIGTERM on (each drains its requests as one gateway does).
"""
from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile

logger = logging.getLogger(__name__)

DRAIN_S = 30     # on SIGTERM, requests in flight get this long (a container stop needs more)
START_FAIL_S = 10   # --gateways: a gateway that dies this soon after its start died "at start"
START_FAILS = 3     # ... and after this many such deaths in a row, `deptree serve` gives up


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--redis-url", help="Redis URL (cache; job stream of the redis backend)")
    p.add_argument("--models", "--model", nargs="+", metavar="NAME",
                   help="models to load (names or directories; '*': every model of the "
                        "--model-dir directories and the shipped ones; default en_ewt)")
    p.add_argument("--model-dir", action="append", metavar="DIR",
                   help="extra directory holding <name>/pipeline.json (repeatable)")
    p.add_argument("--models-dir", metavar="DIR",
                   help="serve every model in DIR (as --model-dir DIR --models '*')")


def _settings(args: argparse.Namespace, **extra):
    """Settings from the environment and the flags; a value out of range is a
    SettingsError (one line, exit code 2), not a traceback."""
    from .core.config import load_settings

    over = {k: v for k, v in extra.items() if v is not None}
    if args.redis_url:
        over["redis_url"] = args.redis_url
    if args.models:
        over["models"] = [m for name in args.models for m in name.split(",") if m]
    if args.model_dir:
        over["model_dirs"] = args.model_dir
    if args.models_dir:
        over["model_dirs"] = [*over.get("model_dirs", []), args.models_dir]
        over.setdefault("models", ["*"])
    return load_settings(**over)


def add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="start the REST gateway (and its local workers)")
    p.add_argument("--host", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8000)")
    p.add_argument("--workers", type=int, help="worker processes to start (default 1)")
    p.add_argument("--gateways", type=int,
                   help="gateway processes serving the port (default 1; more need "
                        "--backend redis, whose queue and cache they share)")
    p.add_argument("--backend", choices=("local", "redis"),
                   help="local: workers over pipes (default); redis: a Redis Stream")
    p.add_argument("--no-cache", action="store_true", help="disable the result cache")
    p.add_argument("--metrics-port", type=int,
                   help="serve /metrics on this port only (not on the API port)")
    _common(p)
    p.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    own_dir = None
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        own_dir = tempfile.mkdtemp(prefix="deptree-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = own_dir
    try:
        return _serve(args)
    finally:
        if own_dir:
            shutil.rmtree(own_dir, ignore_errors=True)


def _serve(args: argparse.Namespace) -> int:
    s = _settings(args, host=args.host, port=args.port, workers=args.workers,
                  backend=args.backend, cache=False if args.no_cache else None,
                  metrics_port=args.metrics_port, gateways=args.gateways)
    if s.backend == "local" or s.workers > 0:
        _check_models(s)
    _raise_open_files_limit()
    if s.gateways > 1:
        return _serve_gateways(s)
    import uvicorn

    uvicorn.run(**_uvicorn_options(s, primary=True), host=s.host, port=s.port)
    return 0


def _uvicorn_options(s, primary: bool) -> dict:
    from .connections import head_timeout_protocol
    from .main import create_app

    # log_config=None: uvicorn's loggers (the access log too) go through the root
    # handler of worker.logsafe (bounded, escaped lines with the request id). No
    # limit_concurrency: it counted idle connections; requests are limited by
    # ConcurrencyLimitMiddleware (max_connections) and heads by header_timeout_s.
    return {"app": create_app(s, primary=primary), "log_level": "info", "log_config": None,
            "http": head_timeout_protocol(s.header_timeout_s),
            "timeout_graceful_shutdown": DRAIN_S}


def _port_socket(host: str, port: int):
    """A TCP socket bound to (host, port) with SO_REUSEPORT, not yet listening."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def _gateway(conf: dict, index: int, log_level: int) -> None:
    """One gateway process of `--gateways N`: its own socket on the shared port (it
    listens once the app has started), the settings it was given, and for every gateway
    but the first no local workers (the first starts them) and no metrics server."""
    import uvicorn

    from worker.logsafe import configure_logging

    from .core.config import load_settings

    configure_logging(log_level)
    s = load_settings(**{**conf, "workers": conf["workers"] if index == 0 else 0})
    sock = _port_socket(s.host, s.port)
    config = uvicorn.Config(**_uvicorn_options(s, primary=index == 0))
    uvicorn.Server(config).run(sockets=[sock])


def _serve_gateways(s) -> int:
    """Run s.gateways gateway processes on s.host:s.port until SIGTERM or SIGINT, which
    each is passed (they drain as one gateway does). A gateway that dies is started
    again (a second later if it died within START_FAIL_S of its start); after START_FAILS
    such deaths in a row all stop (exit 1): it would only die again."""
    import multiprocessing as mp
    import signal
    import time
    from multiprocessing.connection import wait

    holder = _port_socket(s.host, s.port)     # the port is ours (or this fails now)
    conf = s.model_dump(mode="json")
    conf["port"] = holder.getsockname()[1]
    level = logging.getLogger().getEffectiveLevel()
    ctx = mp.get_context("spawn")
    procs: list = [None] * s.gateways
    started = [0.0] * s.gateways
    quick = [0] * s.gateways          # deaths within START_FAIL_S of the start, in a row
    stopping = False

    def start(i: int) -> None:
        procs[i] = ctx.Process(target=_gateway, args=(conf, i, level),
                               name=f"deptree-gateway-{i}")
        procs[i].start()
        started[i] = time.monotonic()
        logger.info("gateway %d: pid %d on %s:%d", i, procs[i].pid, s.host, conf["port"])

    def stop(signum, _frame) -> None:
        nonlocal stopping
        stopping = True
        for p in procs:
            if p is not None and p.is_alive():
                os.kill(p.pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    code = 0
    try:
        for i in range(s.gateways):
            start(i)
        while not stopping:
            wait([p.sentinel for p in procs], timeout=1.0)
            for i, p in enumerate(procs):
                if stopping or p.is_alive():
                    continue
                early = time.monotonic() - started[i] < START_FAIL_S
                quick[i] = quick[i] + 1 if early else 0
                if quick[i] >= START_FAILS:
                    logger.error("gateway %d exited %s at start %d times; stopping", i,
                                 p.exitcode, quick[i])
                    code = 1
                    stop(signal.SIGTERM, None)
                    break
                logger.warning("gateway %d (pid %d) exited %s; starting it again", i, p.pid,
                               p.exitcode)
                if early:
                    time.sleep(1.0)
                if not stopping:
                    start(i)
    finally:
        for p in procs:
            if p is not None:
                p.join(DRAIN_S + 10)
                if p.is_alive():
                    p.kill()
                    p.join(5)
        holder.close()
    return code


def _check_models(s) -> None:
    """Refuse to start (a ModelError: exit code 2, one line naming the file) when a
    model to serve is unknown, damaged, has a part outside its directory, or shares
    its name with another (`models.serve.registry.check`); its workers would otherwise fail
    to load it for ever, and take the models that load down with it."""
    from pathlib import Path

    from models.serve.registry import check, directories

    for d in directories(s.models, [Path(d) for d in s.model_dirs]):
        check(d)


def _raise_open_files_limit(want: int = 65536) -> None:
    """Soft RLIMIT_NOFILE up to the hard limit (at most `want`): every connection is a
    file descriptor, and 1,024 (a common default) is soon reached by idle clients."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    new = want if hard == resource.RLIM_INFINITY else min(hard, want)
    if soft != resource.RLIM_INFINITY and soft < new:
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        logger.info("open files limit raised from %d to %d", soft, new)


def add_worker(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("worker", help="start a worker for the redis backend")
    p.add_argument("--processes", type=int, default=1, help="worker processes (default 1)")
    _common(p)
    p.set_defaults(func=run_worker)


def run_worker(args: argparse.Namespace) -> int:
    from worker.stream import run_supervised

    from .dispatch import worker_config

    s = _settings(args)
    if not s.redis_url:
        sys.stderr.write("deptree worker: --redis-url (or DEPTREE_REDIS_URL) is required\n")
        return 2
    _check_models(s)
    return run_supervised(worker_config(s), s.redis_url, s.stream, args.processes,
                          s.claim_idle_ms, s.max_deliveries)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="deptree")
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    add_serve(sub)
    add_worker(sub)
    args = parser.parse_args(argv)
    from worker.logsafe import configure_logging

    configure_logging(logging.DEBUG if args.verbose else logging.INFO)
    from models.errors import DeptreeError

    try:
        return int(args.func(args) or 0)
    except DeptreeError as exc:
        sys.stderr.write(f"deptree: error: {exc}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())

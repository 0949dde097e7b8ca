"""Prometheus metrics of the gateway (prometheus-client; multiprocess-safe).

The gateway records everything, including what workers measured (decode seconds,
seconds per token, restarts used come back in each tree's stats; RSS and jobs
served in each reply or heartbeat), so one scrape of `/metrics` covers local and
remote workers alike. When `PROMETHEUS_MULTIPROC_DIR` is set (`deptree serve`
sets it to a fresh directory when it is not), samples go to files there and
`/metrics` merges every process's files, so several gateway processes behind one
port report correctly. Metric objects are process-wide, as prometheus-client
requires; they are created once, on first import.
"""
from __future__ import annotations

import logging
import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

logger = logging.getLogger(__name__)

MODEL_DECODER = ["model", "decoder"]

REQUEST_SECONDS = Histogram(
    "deptree_request_seconds", "HTTP request latency by route and status",
    ["route", "method", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120))
DECODE_SECONDS = Histogram(
    "deptree_decode_seconds", "seconds to tag and decode one sentence (in the worker)",
    MODEL_DECODER,
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
SECONDS_PER_TOKEN = Histogram(
    "deptree_seconds_per_token", "decode seconds divided by sentence length", MODEL_DECODER,
    buckets=(1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 0.1))
TAG_SECONDS_PER_TOKEN = Histogram(
    "deptree_tag_seconds_per_token", "tagging seconds (part of the decode seconds) divided by "
    "sentence length, by tagger (fast, accurate)", ["model", "tagger"],
    buckets=(1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 1e-2))
ARC_SECONDS_PER_TOKEN = Histogram(
    "deptree_arc_seconds_per_token", "neural arc scoring seconds (budget field `neural`; part "
    "of the decode seconds) divided by sentence length", ["model"],
    buckets=(1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 1e-2))
RESTARTS_USED = Histogram(
    "deptree_restarts_used", "hill-climbing restarts used per sentence", MODEL_DECODER,
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000))
BRANCHES_TAKEN = Histogram(
    "deptree_branches_taken", "selectional branching: extra sequences branched per sentence",
    MODEL_DECODER, buckets=(0, 1, 2, 4, 8, 16, 32, 64))
TOKENS = Counter("deptree_tokens", "tokens parsed (not from cache)", MODEL_DECODER)
SENTENCES = Counter("deptree_sentences", "sentences parsed (not from cache)", MODEL_DECODER)
DEADLINE_HITS = Counter("deptree_deadline_hits", "sentences whose deadline hit", MODEL_DECODER)
CACHE_HITS = Counter("deptree_cache_hits", "sentences answered from the cache", ["backend"])
CACHE_MISSES = Counter("deptree_cache_misses", "sentences not in the cache", ["backend"])
CACHE_UP = Gauge("deptree_cache_up", "1 when the cache answers (or is in-process/disabled)",
                 multiprocess_mode="livemin")
QUEUE_DEPTH = Gauge("deptree_queue_depth", "jobs waiting for a worker",
                    multiprocess_mode="livesum")
IN_FLIGHT = Gauge("deptree_in_flight", "parse requests being answered",
                  multiprocess_mode="livesum")
WORKERS_UP = Gauge("deptree_workers_up", "workers ready to decode", multiprocess_mode="livemax")
WORKER_UP = Gauge("deptree_worker_up", "1 while a worker is up", ["worker"],
                  multiprocess_mode="livemax")
WORKER_RSS = Gauge("deptree_worker_rss_bytes", "resident set size of a worker", ["worker"],
                   multiprocess_mode="livemax")
WORKER_SERVED = Gauge("deptree_worker_requests_served", "jobs a worker has served",
                      ["worker"], multiprocess_mode="livemax")
WORKER_RESTARTS = Counter("deptree_worker_restarts", "workers replaced, by reason", ["reason"])
ERRORS = Counter("deptree_errors", "error answers by error code", ["type"])


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def render() -> tuple[bytes, str]:
    """The exposition text of every metric (merged over processes when multiprocess)."""
    if multiprocess_dir():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def observe_tree(model: str, decoder: str, tree: dict) -> None:
    """Record the worker-side measurements of one decoded (not cached) sentence."""
    stats = tree.get("stats", {})
    n = len(tree.get("tokens", ()))
    SENTENCES.labels(model, decoder).inc()
    TOKENS.labels(model, decoder).inc(n)
    if "seconds" in stats:
        DECODE_SECONDS.labels(model, decoder).observe(float(stats["seconds"]))
    if "seconds_per_token" in stats:
        SECONDS_PER_TOKEN.labels(model, decoder).observe(float(stats["seconds_per_token"]))
    if "tag_seconds" in stats and n:
        TAG_SECONDS_PER_TOKEN.labels(model, str(stats.get("tagger", ""))).observe(
            float(stats["tag_seconds"]) / n)
    if "neural_seconds" in stats and n:
        ARC_SECONDS_PER_TOKEN.labels(model).observe(float(stats["neural_seconds"]) / n)
    if "restarts_used" in stats:
        RESTARTS_USED.labels(model, decoder).observe(float(stats["restarts_used"]))
    if "branches" in stats:
        BRANCHES_TAKEN.labels(model, decoder).observe(float(stats["branches"]))
    if stats.get("deadline_hit"):
        DEADLINE_HITS.labels(model, decoder).inc()


def set_worker(name: str, up: bool, rss: int | None = None, served: int | None = None) -> None:
    WORKER_UP.labels(name).set(1 if up else 0)
    if rss is not None:
        WORKER_RSS.labels(name).set(rss)
    if served is not None:
        WORKER_SERVED.labels(name).set(served)


def mark_process_dead() -> None:
    if multiprocess_dir():
        multiprocess.mark_process_dead(os.getpid())


class _Refresh:
    """A collector that yields nothing but first runs `refresh` (the dispatcher's
    gauges are set when its status is read)."""

    def __init__(self, refresh) -> None:
        self.refresh = refresh

    def collect(self):
        try:
            self.refresh()
        except Exception as exc:  # a scrape must not fail because a refresh did
            logger.debug("metrics refresh failed: %s", exc)
        return []


def start_metrics_server(host: str, port: int, refresh=None):
    """Serve the exposition on its own port (prometheus-client's WSGI server in a
    daemon thread), so /metrics need not be reachable where /parse is. Returns the
    server; `.shutdown()` stops it."""
    from prometheus_client import start_http_server

    registry = CollectorRegistry()
    if refresh is not None:
        registry.register(_Refresh(refresh))
    if multiprocess_dir():
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_Default())
    server, _thread = start_http_server(port, addr=host, registry=registry)
    return server


class _Default:
    """This process's default registry, as a collector of another registry."""

    def collect(self):
        return REGISTRY.collect()

"""Service settings from environment variables (prefix `DEPTREE_`) and `.env`.

One pydantic-settings `Settings` read once through `get_settings()`; tests
override it with `app.dependency_overrides[get_settings]` or by passing a
`Settings` to `create_app`. Lists may be given as JSON or, for paths, as an
os.pathsep-separated string (`DEPTREE_MODEL_DIRS=/a:/b`).
"""
from __future__ import annotations

import json
import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from models.errors import DeptreeError

logger = logging.getLogger(__name__)


MIN_KEY_CHARS = 16


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DEPTREE_", env_file=".env", extra="ignore")

    # ---- server and dispatch -------------------------------------------------
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = Field(1, ge=0, description="worker processes started by the gateway")
    gateways: int = Field(
        1, ge=1, le=64, description="gateway processes serving the port (SO_REUSEPORT: the "
                                    "kernel spreads connections over them). More than one "
                                    "needs the redis backend: its job stream and Redis "
                                    "cache are shared by every gateway, where the local "
                                    "backend's worker pipes and in-process cache belong to "
                                    "one process. `workers` local stream workers are "
                                    "started once, by the first gateway")
    backend: Literal["local", "redis"] = "local"
    redis_url: str | None = Field(None, description="Redis for the cache and the redis backend")
    stream: str = Field("deptree", description="key prefix of the redis backend's stream")
    request_timeout_s: float = Field(120.0, gt=0, description="answer 504 after this long")
    worker_start_timeout_s: float = 300.0
    max_requests_per_worker: int = Field(0, ge=0, description="recycle after N requests; 0 = never")
    max_worker_rss_mb: float = Field(0, ge=0, description="recycle above this RSS; 0 = never")
    chunk_sentences: int = Field(16, ge=1, description="sentences per job sent to one worker")
    claim_idle_ms: int = Field(5000, ge=100, description="redis: reclaim entries idle this long")
    max_deliveries: int = Field(3, ge=1, description="redis: give up on a job after N deliveries")

    # ---- models and defaults -------------------------------------------------
    # names or directories; "*" serves every model of `model_dirs` and the shipped ones,
    # each picked by a request's `model` (e.g. DEPTREE_MODEL_DIRS=/srv/models
    # DEPTREE_MODELS='*' serves a directory of models `deptree train` wrote)
    models: Annotated[list[str], NoDecode] = ["en_ewt"]
    model_dirs: Annotated[list[Path], NoDecode] = []
    default_model: str | None = None            # first of `models` when unset
    default_decoder: str = "greedy"
    default_tagger: str = Field(
        "auto", description='tagger of raw and tokenized input: "auto" (the most accurate '
                            'the model has), "fast" (linear), "accurate" (+ the neural '
                            'analyser) or "contextual" (+ the analyser that reads a '
                            'pretrained encoder), where the model has them; GET /models '
                            'lists `taggers`')
    default_budget: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description='per-decoder budget defaults, e.g. {"greedy": {"restarts": 50}}')

    # ---- cache ---------------------------------------------------------------
    cache: bool = True
    cache_ttl_s: int = Field(86400, ge=1)
    cache_lru_size: int = Field(10000, ge=0, description="in-process LRU entries (no Redis)")
    cache_lru_bytes: int = Field(256 * 2**20, ge=0,
                                 description="in-process LRU memory in bytes (no Redis): the "
                                             "cached JSON, keys and bookkeeping")
    redis_timeout_s: float = Field(0.25, gt=0)
    redis_retry_s: float = Field(2.0, ge=0, description="after an outage, retry Redis after")
    redis_maxmemory: str | None = Field(None, description='CONFIG SET maxmemory, e.g. "256mb"')
    redis_maxmemory_policy: str | None = Field(None, description='e.g. "allkeys-lru"')
    ready_requires_cache: bool = Field(
        False, description="report not ready (503) while the Redis cache is down")
    api_key: str | None = Field(
        None, description="when set, /parse and /process need it in the X-API-Key header "
                          "(or as 'Authorization: Bearer KEY'); compared in constant time. "
                          "At least 16 characters: an empty value is an error, not 'no key'")
    admin_key: str | None = Field(
        None, description="admin actions (POST /admin/...) need it in the X-Admin-Key header;"
                          " unset: admin actions are refused. Must differ from api_key")
    metrics_port: int | None = Field(
        None, ge=1, le=65535, description="serve /metrics on this port (and not on the API"
                                          " port), e.g. reachable by Prometheus only")
    metrics_host: str | None = Field(None, description="bind address of metrics_port"
                                                       " (default: host)")

    # ---- limits --------------------------------------------------------------
    max_connections: int = Field(
        1000, ge=1, description="requests at once, from a complete request head to the end "
                                "of the answer (a slow body counts); beyond it new requests "
                                "get 503 `overloaded` at once, so slow clients cannot "
                                "exhaust the gateway. Connections that have sent no request "
                                "do not count: they are closed after header_timeout_s")
    header_timeout_s: float = Field(
        10.0, gt=0, description="close a connection that has not sent a complete request "
                                "head this long after it opened (or after its last answer)")
    max_sentences: int = Field(256, ge=1)
    max_tokens_per_sentence: int = Field(250, ge=1)
    max_chars: int = Field(1_000_000, ge=1)
    max_body_bytes: int = Field(2_000_000, ge=1)
    budget_caps: dict[str, float] = Field(
        default_factory=dict,
        description='ceilings of budget fields by field name, over the decoders\' own (GET '
                    '/models lists them as `cap`), e.g. {"restarts": 10000, "deadline_ms": '
                    '600}; the deadline_ms ceiling also bounds requests that ask for no '
                    'deadline')

    @field_validator("models", mode="before")
    @classmethod
    def _split_names(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = json.loads(v) if v.strip().startswith("[") else [s for s in v.split(",") if s]
        return v

    @field_validator("model_dirs", mode="before")
    @classmethod
    def _split_dirs(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = json.loads(v) if v.strip().startswith("[") \
                else [s for s in v.split(os.pathsep) if s]
        return v

    @model_validator(mode="after")
    def _gateways_share_redis(self) -> Settings:
        if self.gateways > 1 and (self.backend != "redis" or not self.redis_url):
            raise ValueError(f"gateways={self.gateways} needs the redis backend and a Redis URL"
                             " (--backend redis --redis-url ...): the local backend's workers"
                             " and in-process cache belong to one gateway process")
        return self

    @model_validator(mode="after")
    def _separate_keys(self) -> Settings:
        if self.admin_key is not None and self.admin_key == self.api_key:
            raise ValueError("admin_key must differ from api_key")
        # An empty key (DEPTREE_API_KEY= from an unset shell variable) would otherwise
        # read as "no key" and leave /parse open: refuse it, as a short one.
        for name in ("api_key", "admin_key"):
            key = getattr(self, name)
            if key is not None and len(key) < MIN_KEY_CHARS:
                raise ValueError(f"{name} must be at least {MIN_KEY_CHARS} characters"
                                 + (" (it is empty: unset DEPTREE_" + name.upper()
                                    + " to turn it off)" if not key else ""))
        return self

    @field_validator("budget_caps")
    @classmethod
    def _positive_caps(cls, v: dict[str, float]) -> dict[str, float]:
        bad = [k for k, cap in v.items() if not cap > 0]
        if bad:
            raise ValueError(f"budget caps must be positive: {', '.join(bad)}")
        return v


class SettingsError(DeptreeError):
    """A DEPTREE_* setting (or a flag) out of range, as one line per problem."""


def load_settings(**over: Any) -> Settings:
    """Settings(**over), with a validation error turned into a SettingsError."""
    try:
        return Settings(**over)
    except ValidationError as exc:
        problems = []
        for e in exc.errors():
            where = ".".join(str(p) for p in e["loc"])
            msg = e["msg"].removeprefix("Value error, ")
            problems.append(f"{where}: {msg}" if where else msg)
        raise SettingsError("invalid settings: " + "; ".join(problems)) from None


@lru_cache
def get_settings() -> Settings:
    return Settings()

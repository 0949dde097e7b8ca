"""Result cache: Redis when a URL is set, an in-process LRU otherwise, or none.

Keys are sha256 over (tree format, `ANSWERS`, model name and version, decoder,
effective budget without `deadline_ms`, seed, tagger, input kind, tokens or text): a
seeded decoder gives the same tree for the same key, and a deadline only matters when
it hit, in which case the tree is not stored (see `app.service`). Values are the JSON
of a list of trees.

A Redis failure (timeout, refused connection) never fails a request: the cache
answers "miss", stores nothing, marks itself down (reported by /ready and the
`deptree_cache_up` gauge) and tries Redis again after `redis_retry_s`. A Redis at
its maxmemory under `noeviction` refuses writes only: the cache stays up.
"""
from __future__ import annotations

import hashlib
import json
import logging
import sys
import time
from collections import OrderedDict
from typing import Any

from redis.exceptions import OutOfMemoryError, RedisError

logger = logging.getLogger(__name__)

KEY_PREFIX = "deptree:cache:"
# the shape of a stored tree (`worker/protocol.py`); in every key, so trees cached
# before a change of shape are never served (2: multiword tokens and space_after)
TREE_FORMAT = 2
# bumped when the code gives other trees for the same model version and request, so
# that a cache kept across an upgrade serves none from before it (2: selectional
# weighs its moves by the neural analyser)
ANSWERS = 2
# What an unreachable, slow or restarting Redis raises (timeouts are TimeoutError).
REDIS_DOWN = (RedisError, OSError, TimeoutError)


def cache_key(model: str, version: str, decoder: str, budget: dict[str, Any], kind: str,
              payload: Any, *, tagger: str | None) -> str:
    """`tagger` is always part of the key (None: the model has none), also for tagged
    input that no tagger touches: simpler than deciding per kind, at the cost of a
    second entry when the same tagged sentence comes with both taggers."""
    b = {k: v for k, v in budget.items() if k != "deadline_ms"}
    blob = json.dumps({"f": TREE_FORMAT, "a": ANSWERS, "m": model, "v": version,
                       "d": decoder, "b": b, "s": b.get("seed"), "t": tagger, "k": kind,
                       "x": payload},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class NullCache:
    backend = "none"

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def get_many(self, keys: list[str]) -> dict[str, Any]:
        return {}

    async def set_many(self, items: dict[str, Any]) -> None:
        pass

    async def flush(self) -> int:
        """Drop every cached result (admin action); returns how many were dropped."""
        return 0

    def status(self) -> dict[str, Any]:
        return {"backend": self.backend, "status": "disabled"}

    @property
    def up(self) -> bool:
        return True


# what one entry of the OrderedDict costs beside its key and value strings (node, hash slot)
ENTRY_OVERHEAD = 112


def entry_bytes(key: str, value: str) -> int:
    """Memory an LRUCache entry holds: its key and JSON strings and their bookkeeping."""
    return sys.getsizeof(key) + sys.getsizeof(value) + ENTRY_OVERHEAD


class LRUCache(NullCache):
    """At most `size` entries and `max_bytes` bytes (`entry_bytes`): one 900k-character
    word makes a 2.6 MB entry, so a count alone does not bound memory."""

    backend = "memory"

    def __init__(self, size: int, max_bytes: int = 256 * 2**20) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.bytes = 0
        self.data: OrderedDict[str, tuple[str, int]] = OrderedDict()   # key -> (JSON, bytes)

    async def get_many(self, keys: list[str]) -> dict[str, Any]:
        out = {}
        for k in keys:
            v = self.data.get(k)
            if v is not None:
                self.data.move_to_end(k)
                out[k] = json.loads(v[0])
        return out

    async def set_many(self, items: dict[str, Any]) -> None:
        for k, v in items.items():
            text = json.dumps(v)
            n = entry_bytes(k, text)
            if n > self.max_bytes:          # would evict everything and still not fit
                continue
            old = self.data.pop(k, None)
            if old is not None:
                self.bytes -= old[1]
            self.data[k] = (text, n)
            self.bytes += n
        while self.data and (len(self.data) > self.size or self.bytes > self.max_bytes):
            self.bytes -= self.data.popitem(last=False)[1][1]

    async def flush(self) -> int:
        n = len(self.data)
        self.data.clear()
        self.bytes = 0
        return n

    def status(self) -> dict[str, Any]:
        return {"backend": self.backend, "status": "up", "entries": len(self.data),
                "bytes": self.bytes, "max_bytes": self.max_bytes}


class RedisCache(NullCache):
    backend = "redis"

    def __init__(self, url: str, ttl_s: int, timeout_s: float, retry_s: float,
                 maxmemory: str | None = None, policy: str | None = None) -> None:
        self.url = url
        self.ttl_s = ttl_s
        self.timeout_s = timeout_s
        self.retry_s = retry_s
        self.maxmemory = maxmemory
        self.policy = policy
        self.client = None
        self.down_since: float | None = None
        self.last_error: str | None = None
        self.errors = 0
        self.full_logged = float("-inf")

    async def start(self) -> None:
        import redis.asyncio as aioredis

        self.client = aioredis.Redis.from_url(
            self.url, socket_timeout=self.timeout_s, socket_connect_timeout=self.timeout_s,
            retry_on_timeout=False, health_check_interval=0)
        try:
            await self.client.ping()
            await self._configure()
        except REDIS_DOWN as exc:
            self._failed(exc)

    async def _configure(self) -> None:
        """CONFIG SET the memory settings (again after an outage: a restarted Redis has
        lost them unless they are in its redis.conf)."""
        for name, value in (("maxmemory", self.maxmemory), ("maxmemory-policy", self.policy)):
            if value:
                try:
                    await self.client.config_set(name, value)
                except RedisError as exc:  # managed Redis may forbid it
                    logger.warning("cannot set Redis %s=%s: %s", name, value, exc)

    async def stop(self) -> None:
        if self.client is not None:
            try:
                await self.client.aclose()
            except REDIS_DOWN as exc:
                logger.debug("closing the Redis client: %s", exc)

    @property
    def up(self) -> bool:
        return self.down_since is None

    def _failed(self, exc: BaseException) -> None:
        self.errors += 1
        self.last_error = f"{type(exc).__name__}: {exc}"
        if self.down_since is None:
            logger.warning("Redis cache down, serving uncached: %s", self.last_error)
            self.down_since = time.monotonic()
        else:
            self.down_since = time.monotonic()     # restart the retry wait

    def _usable(self) -> bool:
        if self.client is None:
            return False
        return self.down_since is None or time.monotonic() - self.down_since >= self.retry_s

    async def _ok(self) -> None:
        if self.down_since is not None:
            logger.info("Redis cache back up")
            self.down_since = None
            try:
                await self._configure()
            except REDIS_DOWN as exc:
                self._failed(exc)

    async def get_many(self, keys: list[str]) -> dict[str, Any]:
        if not keys or not self._usable():
            return {}
        try:
            vals = await self.client.mget([KEY_PREFIX + k for k in keys])
        except REDIS_DOWN as exc:  # an outage is a miss, never an error
            self._failed(exc)
            return {}
        await self._ok()
        out = {}
        for k, v in zip(keys, vals):
            if v is not None:
                try:
                    out[k] = json.loads(v)
                except ValueError:
                    pass
        return out

    async def set_many(self, items: dict[str, Any]) -> None:
        if not items or not self._usable():
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            for k, v in items.items():
                pipe.set(KEY_PREFIX + k, json.dumps(v), ex=self.ttl_s)
            await pipe.execute()
        except REDIS_DOWN as exc:
            if isinstance(exc, OutOfMemoryError):   # full under noeviction: no outage,
                self._full(exc)                     # what it holds is still read
                return
            self._failed(exc)
            return
        await self._ok()

    def _full(self, exc: BaseException) -> None:
        now = time.monotonic()
        if now - self.full_logged > 60:
            logger.warning("Redis cache full, new entries not stored: %s", exc)
            self.full_logged = now

    async def flush(self) -> int:
        """UNLINK the cache's own keys (SCAN by prefix, batches of 1000); other keys in
        the database, the job stream included, are not touched. Raises on an outage."""
        n = 0
        batch: list[bytes] = []
        async for key in self.client.scan_iter(match=KEY_PREFIX + "*", count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                n += await self.client.unlink(*batch)
                batch = []
        if batch:
            n += await self.client.unlink(*batch)
        return n

    async def ping(self) -> None:
        """Re-check an outage now (used by /ready)."""
        if self.client is None or not self._usable():
            return
        try:
            await self.client.ping()
        except REDIS_DOWN as exc:
            self._failed(exc)
            return
        await self._ok()

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"backend": self.backend, "status": "up" if self.up else "down"}
        if not self.up:
            out["error"] = self.last_error
        return out


def make_cache(settings) -> NullCache:
    if not settings.cache:
        return NullCache()
    if settings.redis_url:
        return RedisCache(settings.redis_url, settings.cache_ttl_s, settings.redis_timeout_s,
                          settings.redis_retry_s, settings.redis_maxmemory,
                          settings.redis_maxmemory_policy)
    return LRUCache(settings.cache_lru_size, settings.cache_lru_bytes)

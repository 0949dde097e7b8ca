"""Cache keys and the in-process and Redis caches, without HTTP."""
from __future__ import annotations

import asyncio

from app.cache import LRUCache, RedisCache, cache_key

BASE = {"model": "en_ewt", "version": "1+abc", "decoder": "greedy",
        "budget": {"restarts": 50, "converge": 20, "init": "first_order", "seed": 0},
        "kind": "tokens", "payload": {"forms": ["A", "cat"]}, "tagger": "fast"}


def key(**change):
    return cache_key(**{**BASE, **change})


def test_key_changes_with_decoder_budget_seed_model_version_and_input():
    k = key()
    assert key() == k
    assert key(decoder="mst") != k
    assert key(budget={**BASE["budget"], "restarts": 51}) != k
    assert key(budget={**BASE["budget"], "seed": 1}) != k
    assert key(version="1+abd") != k
    assert key(model="de_gsd") != k
    assert key(payload={"forms": ["A", "dog"]}) != k
    assert key(kind="sentence", payload={"text": "A cat"}) != k


def test_key_differs_between_fast_and_accurate_taggers():
    """Fast and accurate answers never share an entry, tagged input included (it keeps
    its tags, but the key does not try to know that)."""
    for kind, payload in (("tokens", BASE["payload"]), ("sentence", {"text": "A cat"}),
                          ("tagged", {"forms": ["A", "cat"], "upos": ["DET", "NOUN"],
                                      "xpos": ["DT", "NN"], "lemmas": ["a", "cat"]})):
        keys = {key(kind=kind, payload=payload, tagger=t) for t in ("fast", "accurate", None)}
        assert len(keys) == 3, kind
    assert key(tagger="accurate") == key(tagger="accurate")


def test_key_ignores_deadline_and_field_order():
    assert key(budget={**BASE["budget"], "deadline_ms": 100}) == key()
    assert key(budget=dict(reversed(list(BASE["budget"].items())))) == key()


def test_lru_evicts_the_least_recently_used():
    c = LRUCache(2)

    async def go():
        await c.set_many({"a": [1], "b": [2]})
        await c.get_many(["a"])
        await c.set_many({"c": [3]})
        return await c.get_many(["a", "b", "c"])
    assert asyncio.run(go()) == {"a": [1], "c": [3]}


def test_unreachable_redis_is_a_miss_not_an_error():
    c = RedisCache("redis://127.0.0.1:1/0", ttl_s=60, timeout_s=0.2, retry_s=10)

    async def go():
        await c.start()
        got = await c.get_many(["a"])
        await c.set_many({"a": [1]})
        await c.stop()
        return got
    assert asyncio.run(go()) == {}
    assert c.status()["status"] == "down" and not c.up


def test_memory_cache_is_capped_in_bytes_not_only_entries():
    """Issue 20, defect 7: 10,000 entries of 900k-character words would hold ~26 GB; the
    in-process cache keeps at most `cache_lru_bytes` (the JSON text it holds, keys and
    bookkeeping counted) and never an entry larger than that."""
    from app.cache import make_cache
    from app.core.config import Settings

    cap = 5_000_000
    c = make_cache(Settings(redis_url=None, cache_lru_size=10_000, cache_lru_bytes=cap))
    word = "w" * 900_000

    def tree(i: int) -> list[dict]:
        return [{"tokens": [{"id": 1, "form": f"{word}{i}", "lemma": f"{word}{i}",
                             "head": 0, "deprel": "root"}], "score": 1.0, "stats": {}}]

    async def go():
        for i in range(20):
            await c.set_many({f"k{i}": tree(i)})
            assert c.status()["bytes"] <= cap
        return await c.get_many([f"k{i}" for i in range(20)])
    got = asyncio.run(go())
    assert 1 <= len(got) <= 2 and "k19" in got           # the newest ones, within the cap
    assert c.status()["entries"] == len(got)
    assert c.status()["max_bytes"] == cap

    async def too_big():
        await c.set_many({"huge": [{"tokens": [{"form": "x" * (cap + 1)}]}]})
        return await c.get_many(["huge", "k19"])
    assert asyncio.run(too_big()) == {"k19": got["k19"]}  # refused, nothing evicted for it


def test_memory_cache_default_cap_is_256_mb():
    from app.core.config import Settings

    assert Settings().cache_lru_bytes == 256 * 2**20

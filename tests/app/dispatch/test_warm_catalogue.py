"""The gateway's `warm` decoders: those every live worker has compiled (issue 19)."""
from __future__ import annotations

from app.dispatch.base import with_warm

CATALOGUE = {"en_ewt": {"version": "1", "decoders": {"greedy": {}, "mst": {}, "selectional": {}}},
             "de_gsd": {"version": "2", "decoders": {"greedy": {}, "mst": {}}}}


def test_warm_is_what_every_worker_has_compiled():
    out = with_warm(CATALOGUE, [{"en_ewt": ["mst", "selectional"], "de_gsd": ["mst"]},
                                {"en_ewt": ["selectional", "greedy"], "de_gsd": ["mst", "greedy"]}])
    assert out["en_ewt"]["warm"] == ["selectional"]
    assert out["de_gsd"]["warm"] == ["mst"]
    assert out["en_ewt"]["version"] == "1" and "warm" not in CATALOGUE["en_ewt"]


def test_a_worker_that_reports_nothing_counts_as_warm():
    out = with_warm(CATALOGUE, [None, {"en_ewt": ["mst"]}])
    assert out["en_ewt"]["warm"] == ["mst"]
    assert out["de_gsd"]["warm"] == []          # that worker has none of de_gsd warm
    assert with_warm(CATALOGUE, [])["en_ewt"]["warm"] == ["greedy", "mst", "selectional"]

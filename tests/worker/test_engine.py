"""The worker's Engine on a real model, in process: job kinds, limits, deadlines, errors."""
from __future__ import annotations

import time

import pytest

from worker.config import WorkerConfig
from worker.engine import Engine


@pytest.fixture(scope="module")
def engine(model_dirs):
    e = Engine(WorkerConfig(models=["en_ewt"], model_dirs=model_dirs, max_requests=3))
    e.load()
    e.warm_up()
    assert e.wait_warm(600)       # on a cold numba cache the slow decoders warm after warm_up
    return e


def job(items, decoder="greedy", budget=None, **kw):
    return {"id": "t", "model": "en_ewt", "decoder": decoder, "budget": budget or {},
            "deadline_at": None, "limits": {"max_tokens_per_sentence": 250, "max_sentences": 256},
            "items": items, **kw}


def is_tree(tree):
    heads = [t["head"] for t in tree["tokens"]]
    return sum(h == 0 for h in heads) == 1 and all(0 <= h <= len(heads) for h in heads)


def test_catalogue_lists_every_registered_decoder(engine):
    from models.decoder_registry import GRAPH_DECODERS as DECODERS

    info = engine.catalogue()["en_ewt"]
    pipe = engine.pipes["en_ewt"]
    assert set(info["decoders"]) == set(pipe.decoders()) >= set(DECODERS)
    assert info["version"] and info["labels"] and "parser" in info["components"]
    assert "restarts" in info["decoders"]["greedy"]["fields"]
    # the catalogue carries each decoder's spec, which the gateway checks budgets with
    restarts = info["decoders"]["greedy"]["params"]["restarts"]
    assert (restarts["kind"], restarts["lo"], restarts["cap"]) == ("int", 1, 2000)
    assert info["arc_weight"] == pipe.arc_weight          # None: no neural analyser


def test_each_item_kind(engine):
    reply = engine.run(job([
        {"kind": "sentence", "text": "The cat sat on the mat."},
        {"kind": "document",
         "text": "The cat sat on the mat. The dog barked loudly at the mailman."},
        {"kind": "tokens", "forms": ["Pre", "tokenized", "words"]},
        {"kind": "tagged", "forms": ["Dogs", "bark"], "upos": ["NOUN", "VERB"],
         "xpos": ["NNS", "VBP"], "lemmas": ["dog", "bark"]}]))
    assert reply["ok"], reply
    sent, doc, toks, tagged = reply["results"]
    assert len(sent) == 1
    assert sent[0]["tokens"][0]["start"] == 0 and sent[0]["tokens"][0]["end"] == 3
    assert len(doc) == 2
    assert [t["form"] for t in toks[0]["tokens"]] == ["Pre", "tokenized", "words"]
    assert "start" not in toks[0]["tokens"][0]
    assert [t["upos"] for t in tagged[0]["tokens"]] == ["NOUN", "VERB"]
    assert all(is_tree(t) for trees in reply["results"] for t in trees)
    assert reply["worker"]["served"] >= 1 and reply["worker"]["rss_bytes"] > 0


def test_raw_sentence_over_the_token_limit_is_a_limit_error(engine):
    reply = engine.run(job([{"kind": "sentence", "text": " ".join(["word"] * 300)}]))
    assert not reply["ok"]
    err = reply["error"]
    assert (err["kind"], err["limit"], err["value"], err["got"]) == (
        "limit", "max_tokens_per_sentence", 250, 300)


def test_document_over_the_sentence_limit(engine):
    j = job([{"kind": "document", "text": "It rains. " * 5}])
    j["limits"]["max_sentences"] = 3
    err = engine.run(j)["error"]
    assert (err["kind"], err["limit"]) == ("limit", "max_sentences")


def test_bad_budget_and_unknown_model_are_refusals_not_crashes(engine):
    err = engine.run(job([{"kind": "tokens", "forms": ["a"]}], budget={"restarts": -1}))["error"]
    assert err["kind"] == "budget" and "restarts" in err["message"]
    bad = job([{"kind": "tokens", "forms": ["a"]}])
    bad["model"] = "nope"
    assert engine.run(bad)["error"]["code"] == "unknown_model"
    assert engine.run(job([{"kind": "sentence", "text": "   "}]))["error"]["code"] == \
        "empty_sentence"


def test_request_deadline_bounds_the_whole_job(engine, slow):
    tokens, budget = slow
    t0 = time.monotonic()
    reply = engine.run(job([{"kind": "tokens", "forms": tokens}] * 3, budget=budget,
                           deadline_at=time.time() + 0.5))
    elapsed = time.monotonic() - t0
    assert reply["ok"]
    assert all(t[0]["stats"]["deadline_hit"] for t in reply["results"])
    assert elapsed < 0.5 + 3.0        # generous margin: one restart chunk per sentence


def test_expired_job_is_not_parsed(engine):
    reply = engine.run(job([{"kind": "tokens", "forms": ["a"]}], expires_at=time.time() - 1))
    assert reply["error"]["code"] == "expired"


def test_recycle_after_max_requests(model_dirs, engine):
    engine.served = 3
    assert engine.should_recycle() == "requests"
    engine.served = 0
    assert engine.should_recycle() is None


def test_stats_are_plain_json():
    import json

    import numpy as np

    from worker.protocol import jsonable

    stats = {"a": np.int64(3), "b": np.float32(0.5), "c": np.array([1.0, 2.0]), "d": True,
             "e": [np.float64(1.5)], "f": None, "g": float("-inf"), "h": np.array([np.nan])}
    assert json.loads(json.dumps(jsonable(stats), allow_nan=False)) == {
        "a": 3, "b": 0.5, "c": [1.0, 2.0], "d": True, "e": [1.5], "f": None, "g": None,
        "h": [None]}


def test_text_certainly_over_the_limits_is_refused_before_tokenizing(engine, monkeypatch):
    """A megabyte of words is refused from its word count alone: tokenizing it first
    cost a worker seconds for an answer known in advance."""
    pipe = engine.pipes["en_ewt"]

    def no_tokenizing(*a, **k):
        raise AssertionError("tokenized text that is certainly over the limits")

    monkeypatch.setattr(pipe, "tokenize", no_tokenizing)
    limits = {"max_tokens_per_sentence": 250, "max_sentences": 256}
    for item, cap in (({"kind": "document", "text": "word " * 70_000}, 64_000),
                      ({"kind": "sentence", "text": "w " * 251}, 250)):
        reply = engine.run(job([item], limits=limits))
        assert not reply["ok"] and reply["error"]["code"] == "too_many_tokens"
        assert reply["error"]["value"] == cap


@pytest.mark.parametrize("unit, kind, cap, most", [
    ("a.b,c;d:e!f?g(h)i", "sentence", 250, 252),
    ("a.b,c;d:e!f?g(h)i", "document", 250 * 256, 250 * 256 + 2),
    ("a.b", "sentence", 250, 252),
    # "a.b" repeated is dotted names of 9 parts ("ba.ba...ba", `token_patterns.REST`): 2
    # tokens in 27 characters, 62,966 in all, under the document's cap, so it is
    # tokenized whole and its one sentence is over the sentence's cap
    ("a.b", "document", 250, 250 * 256),
    ("a.B", "document", 250 * 256, 250 * 256 + 2),   # the same scan, 2 tokens in 3 characters
])
def test_text_without_spaces_is_tokenized_only_up_to_the_limit(engine, unit, kind, cap, most):
    """Issue 20, defect 2: an 850 kB text with no space is one word for the pre-check but
    750,000 tokens; it was tokenized whole (23.7 s; "a.b" repeated: hours) before the
    413. The tokenizer now stops past the cap: `got` is where it stopped (at most
    `most`)."""
    limits = {"max_tokens_per_sentence": 250, "max_sentences": 256}
    text = unit * (850_000 // len(unit))
    reply = engine.run(job([{"kind": kind, "text": text}], limits=limits))
    assert not reply["ok"] and reply["error"]["code"] == "too_many_tokens", reply
    assert reply["error"]["value"] == cap and cap < reply["error"]["got"] <= most


# ---- the tagger a job asks for -----------------------------------------------------------
WORDS = ["I", "saw", "her", "duck", "near", "the", "bank", "."]


def tags_of(reply: dict) -> list[list[tuple[str, str]]]:
    assert reply["ok"], reply
    return [[(t["upos"], t["xpos"]) for t in trees[0]["tokens"]] for trees in reply["results"]]


def test_catalogue_lists_the_models_taggers(engine):
    info = engine.catalogue()["en_ewt"]
    assert info["taggers"] == engine.pipes["en_ewt"].taggers
    assert info["taggers"][0] == "fast"
    assert set(info["taggers"]) <= {"fast", "accurate", "contextual"}


def test_job_without_tagger_is_tagged_by_the_fast_tagger(engine):
    """Jobs of older gateways carry no "tagger": they mean the fast tagger, as before."""
    pipe = engine.pipes["en_ewt"]
    items = [{"kind": "tokens", "forms": WORDS}, {"kind": "sentence", "text": " ".join(WORDS)}]
    old = tags_of(engine.run(job(items, decoder="mst")))
    assert tags_of(engine.run(job(items, decoder="mst", tagger=None))) == old
    assert tags_of(engine.run(job(items, decoder="mst", tagger="fast"))) == old
    upos, xpos, _ = pipe.tag(WORDS, "fast")
    assert old == [list(zip(upos, xpos))] * 2


def test_unknown_tagger_is_a_refusal_naming_the_models_taggers(engine):
    err = engine.run(job([{"kind": "tokens", "forms": WORDS}], tagger="quantum"))["error"]
    assert err["kind"] == "budget" and "quantum" in err["message"]
    assert all(t in err["message"] for t in engine.pipes["en_ewt"].taggers)
    # tagged input is not tagged: the job's tagger does not matter
    tagged = {"kind": "tagged", "forms": ["Dogs", "bark"], "upos": ["NOUN", "VERB"],
              "xpos": ["NNS", "VBP"], "lemmas": ["dog", "bark"]}
    assert tags_of(engine.run(job([tagged], tagger="quantum"))) == [
        [("NOUN", "NNS"), ("VERB", "VBP")]]


def test_accurate_job_is_tagged_by_the_accurate_tagger(engine, ewt_dev_tokens):
    pipe = engine.pipes["en_ewt"]
    # a sentence the two taggers tag differently, so the answer shows which one ran
    forms = next((f for f in ewt_dev_tokens(500)
                  if pipe.tag(f, "fast")[:2] != pipe.tag(f, "accurate")[:2]), None)
    assert forms is not None, "fast and accurate agree on 500 dev sentences"
    for tagger in ("fast", "accurate"):
        upos, xpos, _ = pipe.tag(forms, tagger)
        got = tags_of(engine.run(job([{"kind": "tokens", "forms": forms}], decoder="mst",
                                     tagger=tagger)))
        assert got == [list(zip(upos, xpos))], tagger


def counting_states(monkeypatch, analyser) -> list[int]:
    """The sizes of the batches the analyser runs from now on."""
    batches: list[int] = []
    states = analyser.states

    def counted(group, *rest, **kw):
        batches.append(len(group))
        return states(group, *rest, **kw)
    monkeypatch.setattr(analyser, "states", counted)
    return batches


def counting_analysis_steps(monkeypatch) -> list[int]:
    """The units of each step of analysis the jobs' paces time from now on."""
    from worker.pace import Pace

    steps: list[int] = []
    analysed = Pace.analysed

    def counted(self, units, seconds):
        steps.append(units)
        return analysed(self, units, seconds)
    monkeypatch.setattr(Pace, "analysed", counted)
    return steps


def fresh_sentences(ewt_dev_tokens, skip: int, n: int) -> list[list[str]]:
    """n dev sentences past the first `skip`, which no other test here parses (so none
    is among the analyser's recent analyses)."""
    return [f for f in ewt_dev_tokens(2001) if len(f) > 3][skip:skip + n]


def test_a_long_job_analyses_each_sentence_once_and_window_by_window(engine, ewt_dev_tokens,
                                                                      monkeypatch):
    """The analyser keeps its last RECENT analyses: a job of more sentences than that is
    analysed ahead in windows, each sentence once (analysing all first computed the
    early ones twice, and could not be stopped before the first tree)."""
    from models.neural.network import RECENT
    from models.serve.parse_policy import AHEAD_SENTENCES

    assert AHEAD_SENTENCES <= RECENT // 2
    analyser = engine.pipes["en_ewt"].c.analyser
    if analyser is None:
        pytest.skip("en_ewt has no neural analyser")
    sents = fresh_sentences(ewt_dev_tokens, 600, 3 * RECENT)
    batches = counting_states(monkeypatch, analyser)
    reply = engine.run(job([{"kind": "tokens", "forms": f} for f in sents], decoder="mst",
                           tagger="accurate"))
    assert reply["ok"], reply
    assert sum(batches) == len({tuple(f) for f in sents})     # no sentence twice
    assert max(batches) <= AHEAD_SENTENCES


def test_a_job_past_its_time_stops_within_one_window(engine, ewt_dev_tokens, monkeypatch):
    from models.serve.parse_policy import AHEAD_SENTENCES

    analyser = engine.pipes["en_ewt"].c.analyser
    if analyser is None:
        pytest.skip("en_ewt has no neural analyser")
    sents = fresh_sentences(ewt_dev_tokens, 1000, 200)
    batches = counting_states(monkeypatch, analyser)
    reply = engine.run(job([{"kind": "tokens", "forms": f} for f in sents], decoder="mst",
                           tagger="accurate", expires_at=time.time() + 0.05))
    assert reply["error"]["code"] == "expired", reply
    done = int(reply["error"]["message"].split("stopped after ")[1].split()[0])
    assert sum(batches) <= done + AHEAD_SENTENCES < len(sents), (done, batches)


def test_a_late_job_parses_after_one_chunk_to_learn_whether_it_can_end(engine, ewt_dev_tokens,
                                                                         monkeypatch):
    """Past its deadline, with no pace of late parses measured (its own or the last
    job's), a job analysed its whole window (2,048 words, 0.6 s) before its first parse
    could tell it that it was lost: 8 sentences of 250 words at `deadline_ms` 1 kept the
    workers busy 0.9 s, about all of the issue's one second (issue 61, defect 1). It now
    analyses one chunk, parses, and analyses the rest of the window only then."""
    from models.serve.parse_policy import AHEAD_CHUNK_TOKENS

    pipe = engine.pipes["en_ewt"]
    if pipe.c.analyser is None:
        pytest.skip("en_ewt has no neural analyser")
    calls: list[tuple[str, int]] = []
    analyse, parse = pipe.analyze_ahead, pipe.parse_words

    def analysed(sents, *a, **k):
        calls.append(("analyse", sum(map(len, sents))))
        return analyse(sents, *a, **k)

    def parsed(forms, *a, **k):
        calls.append(("parse", len(forms)))
        return parse(forms, *a, **k)
    monkeypatch.setattr(pipe, "analyze_ahead", analysed)
    monkeypatch.setattr(pipe, "parse_words", parsed)
    sents = fresh_sentences(ewt_dev_tokens, 1400, 60)
    assert sum(map(len, sents)) > 2 * AHEAD_CHUNK_TOKENS
    engine.paces.clear()
    items = [{"kind": "tokens", "forms": f} for f in sents]
    late = {"deadline_at": time.time() - 1, "expires_at": time.time() + 120}
    reply = engine.run(job(items, decoder="mst", tagger="accurate", **late))
    assert reply["ok"], reply
    kinds = [k for k, _ in calls]
    assert kinds[:3] == ["analyse", "parse", "analyse"], calls[:5]
    assert calls[0][1] <= AHEAD_CHUNK_TOKENS
    assert sum(n for k, n in calls if k == "analyse") == sum(map(len, sents))  # each once
    # the next such job knows the late parses' pace (the prior): its window is analysed
    # whole, in chunks, before its first parse
    calls.clear()
    items = [{"kind": "tokens", "forms": f} for f in fresh_sentences(ewt_dev_tokens, 1460, 60)]
    late = {"deadline_at": time.time() - 1, "expires_at": time.time() + 120}
    engine.run(job(items, decoder="mst", tagger="accurate", **late))
    assert kinds.index("parse") == 1 and [k for k, _ in calls].index("parse") > 1


def test_chunks_sized_by_a_slow_pace_still_hold_enough_words(engine, ewt_dev_tokens,
                                                             monkeypatch):
    """A pace measured on small steps is mostly a call's fixed cost (the contextual
    tagger's one 2-word sentence: 6.7 ms a word against 1 ms beyond 12 ms a call). Sized
    by such a pace, chunks shrank to one sentence each, each measured slower still, and
    a 16-sentence job of a /process request on a busy machine judged itself lost and
    was answered 504 with 5 s to go (issue 61, defect 1). Chunks now hold at least
    MIN_CHUNK_WORDS (as far as whole sentences fill it), and steps below
    `pace.MIN_WORDS` do not set the pace."""
    from worker.engine import MIN_CHUNK_WORDS

    pipe = engine.pipes["en_ewt"]
    if pipe.c.analyser is None:
        pytest.skip("en_ewt has no neural analyser")
    chunks: list[list[int]] = []             # the lengths of each chunk's sentences
    analyse = pipe.analyze_ahead

    def analysed(sents, *a, **k):
        chunks.append([len(f) for f in sents])
        return analyse(sents, *a, **k)
    monkeypatch.setattr(pipe, "analyze_ahead", analysed)
    sents = fresh_sentences(ewt_dev_tokens, 1520, 30)
    engine.paces[("en_ewt", "mst", "accurate")] = {"analyse": 0.05}     # 5 words a step
    items = [{"kind": "tokens", "forms": f} for f in sents]
    reply = engine.run(job(items, decoder="mst", tagger="accurate",
                           deadline_at=time.time() + 60, expires_at=time.time() + 61))
    assert reply["ok"], reply
    assert sum(map(sum, chunks)) == sum(map(len, sents))
    # each chunk was filled towards MIN_CHUNK_WORDS words: the next sentence did not fit
    assert all(sum(a) + b[0] > MIN_CHUNK_WORDS for a, b in zip(chunks, chunks[1:])), chunks
    # what the job measured is the pace the next one starts from: per word, not per call
    assert engine.paces[("en_ewt", "mst", "accurate")]["analyse"] < 0.05


def test_the_contextual_analysis_is_paced_per_piece_of_the_encoder(engine, monkeypatch):
    """The contextual tagger's look-ahead costs what its encoder's pieces cost, not its
    words: a word of many pieces costs 3 to 5 times an ordinary one, and a late job of
    250 such words, judged by a pace per ordinary word, kept the workers 2.1 s past a
    1 ms deadline (tests/reliability/test_lookahead.py, [selectional-contextual], a slow
    VM on 2026-12-02). The job counts its steps in pieces, which the probe's ordinary
    words also are counted in."""
    pipe = engine.pipes["en_ewt"]
    if pipe.c.contextual is None:
        pytest.skip("the test model has no contextual tagger")
    steps = counting_analysis_steps(monkeypatch)
    sents = [[f"Xylo{k}q{j}zz" for j in range(40)] for k in range(3)]   # many pieces a word
    pieces = pipe.c.with_contextual().analyser.context.subwords
    n_pieces = sum(len(p) for s in sents for p in pieces.word_pieces(s))
    assert n_pieces >= 3 * sum(map(len, sents))
    items = [{"kind": "tokens", "forms": f} for f in sents]
    reply = engine.run(job(items, decoder="mst", tagger="contextual"))
    assert reply["ok"], reply
    assert sum(steps) == n_pieces


def test_sentences_the_analyser_holds_cost_the_pace_nothing(engine, monkeypatch):
    """A job whose sentences the analyser holds already (another decoder's request for
    the same words) analyses nothing ahead: counted at its pieces, it timed 2,000 of
    them in 0.00 s, the next late job took that for the analyser's pace, analysed and
    parsed a 250-word sentence before it learnt it could not end, and the workers were
    busy 1.24 s after a 1 ms deadline (CI, 2026-12-03,
    tests/reliability/test_lookahead.py [selectional-contextual])."""
    pipe = engine.pipes["en_ewt"]
    if pipe.c.contextual is None:
        pytest.skip("the test model has no contextual tagger")
    sents = [[f"Held{k}w{j}" for j in range(30)] for k in range(3)]
    items = [{"kind": "tokens", "forms": f} for f in sents]
    assert engine.run(job(items, decoder="mst", tagger="contextual"))["ok"]
    rate = engine.analysis["en_ewt", "contextual"]
    assert rate > 0
    steps = counting_analysis_steps(monkeypatch)
    assert engine.run(job(items, decoder="greedy", tagger="contextual"))["ok"]
    assert sum(steps) == 0                     # nothing left to analyse, nothing timed
    assert engine.analysis["en_ewt", "contextual"] == rate

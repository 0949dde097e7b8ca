"""A model directory written by `deptree train` served as it is, over real HTTP; a whole
directory of models served at once, each request picking one with `model`."""
from __future__ import annotations

import shutil


def test_a_built_model_answers_through_the_service(built_model, serve):
    srv = serve(workers=1, env={"DEPTREE_MODEL_DIRS": str(built_model.parent),
                                "DEPTREE_MODELS": "tiny"})
    with srv.client() as http:
        info = http.get("/models").json()
        assert info["default_model"] == "tiny"
        tiny = info["models"]["tiny"]
        assert tiny["taggers"] == ["fast", "accurate"] and "selectional" in tiny["decoders"]
        r = http.post("/parse", json={"sentences": ["The forces killed him near the border."],
                                      "decoder": "greedy"})
        assert r.status_code == 200, r.text
        sent = r.json()["sentences"][0]
        assert r.json()["tagger"] == "accurate"          # the default: the best one there is
        heads = [t["head"] for t in sent["tokens"]]
        assert heads.count(0) == 1 and sent["stats"]["neural"] > 0
        r = http.post("/parse", json={"sentences": [["They", "left", "."]],
                                      "decoder": "selectional", "tagger": "fast"})
        assert r.status_code == 200, r.text
        # two analysers averaged; a request may use the first alone, for speed
        assert tiny["analysers"] == 2 and sent["stats"]["analysers"] == 2
        assert tiny["decoders"]["greedy"]["params"]["analysers"]["hi"] == 2
        r = http.post("/parse", json={"sentences": ["The forces killed him near the border."],
                                      "decoder": "greedy", "analysers": 1})
        assert r.status_code == 200 and r.json()["sentences"][0]["stats"]["analysers"] == 1
        r = http.post("/parse", json={"sentences": [["They", "left", "."]], "analysers": 3})
        assert r.status_code == 422 and "analysers" in r.text, r.text


def test_a_directory_of_models_is_served_model_by_model(built_model, serve, tmp_path):
    models = tmp_path / "models"
    for name in ("tiny", "other"):
        shutil.copytree(built_model, models / name)
    meta = (models / "other" / "pipeline.json")
    meta.write_text(meta.read_text().replace('"name": "tiny"', '"name": "other"'))
    srv = serve(workers=1, args=["--models-dir", str(models)],
                env={"DEPTREE_MODEL_DIRS": "", "DEPTREE_MODELS": "*"})
    with srv.client() as http:
        listed = http.get("/models").json()["models"]
        assert {"tiny", "other", "en_ewt"} <= set(listed)
        for name in ("tiny", "other", "en_ewt"):
            r = http.post("/parse", json={"sentences": [["They", "left", "."]], "model": name,
                                          "decoder": "mst"})
            assert r.status_code == 200 and r.json()["model"] == name, r.text
        r = http.post("/parse", json={"sentences": [["x"]], "model": "nowhere"})
        assert r.status_code == 422 and "tiny" in r.text

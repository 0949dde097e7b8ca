"""/udpipe/models and /udpipe/process called as UDPipe's REST documentation calls them.

The requests are the documentation's own examples (its browser URLs and its curl
commands, with lindat's `.../services/udpipe/api` replaced by this server's `/udpipe`),
run over real HTTP against a real uvicorn; and the multipart form that UDPipe's
`udpipe2_client.py` sends.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import urllib.parse
import urllib.request
import uuid

import pytest

from models.conllu import read_conllu_string, validate_tree

CZECH = "Děti pojedou k babičce. Už se těší."
CONLLU = """# sent_id = 1
1\tDogs\t_\t_\t_\t_\t_\t_\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\t_\t_\t_\t_\t_\t_\t_\t_
3\tn't\t_\t_\t_\t_\t_\t_\t_\t_
4\tbark\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
5\t.\t_\t_\t_\t_\t_\t_\t_\t_

"""


def curl(*args: str) -> dict:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    proc = subprocess.run(["curl", "--silent", "--show-error", "--fail-with-body", *args],
                          check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def trees(result: str) -> list:
    """The sentences of a CoNLL-U result, each checked to be a tree."""
    sents = read_conllu_string(result)
    for s in sents:
        validate_tree(s)
    return sents


def test_models_in_udpipe_shape(server):
    with server.client() as c:
        own = c.get("/models").json()
        for method in ("GET", "POST"):          # the documentation allows both
            r = c.request(method, "/udpipe/models")
            assert r.status_code == 200, r.text
            comps = ["tokenizer", "tagger", "parser"]
            assert r.json() == {"models": {"en_ewt": comps}, "default_model": "en_ewt"}
    assert own["default_model"] == "en_ewt"            # deptree's /models keeps its shape
    assert {"decoders", "labels", "components"} <= set(own["models"]["en_ewt"])


def test_browser_example_get_with_bare_option_names(server):
    # http://.../api/process?tokenizer&tagger&parser&data=Děti pojedou k babičce. Už se těší.
    url = (server.url + "/udpipe/process?tokenizer&tagger&parser&data="
           + urllib.parse.quote(CZECH))
    with urllib.request.urlopen(url, timeout=60) as resp:
        assert resp.status == 200
        body = json.loads(resp.read().decode("utf-8"))
    assert set(body) == {"model", "acknowledgements", "result"} and body["model"] == "en_ewt"
    assert "".join(s.text for s in trees(body["result"])).replace(" ", "") == CZECH.replace(" ", "")


def test_curl_data_on_the_command_line(server):
    # curl --data 'tokenizer=&tagger=&parser=&data=Děti pojedou k babičce. Už se těší.' URL
    body = curl("--data", f"tokenizer=&tagger=&parser=&data={CZECH}",
                server.url + "/udpipe/process")
    assert "".join(s.text for s in trees(body["result"])).replace(" ", "") == CZECH.replace(" ", "")


def test_curl_file_as_input_and_model_option(server, tmp_path):
    # curl -F 'data=@input_file' URL; curl -F 'data=@input_file' -F 'model=english' URL
    (tmp_path / "input_file").write_text(CONLLU, encoding="utf-8")
    for extra in ([], ["-F", "model=en"]):      # "en": the first word of en_ewt
        body = curl("-F", f"data=@{tmp_path / 'input_file'}", *extra,
                    server.url + "/udpipe/process")
        assert body["model"] == "en_ewt"
        (sent,) = trees(body["result"])
        assert [w.form for w in sent.words] == ["Dogs", "do", "n't", "bark", "."]
        assert "2-3\tdon't" in body["result"]


def test_unknown_model_is_a_clear_422(server):
    with server.client() as c:
        r = c.post("/udpipe/process", data={"data": CONLLU, "model": "english"})
    assert r.status_code == 422
    assert r.json()["error"]["code"] == "unknown_model" and "en_ewt" in r.json()["error"][
        "message"]


def test_udpipe2_client_multipart(server):
    """The form udpipe2_client.py sends: text/plain parts with a charset, a quoted
    boundary; and its --list_models, a bare GET of BASE/models."""
    fields = {"input": "horizontal", "output": "conllu", "data": "Dogs bark .\nCats sleep .\n",
              "model": "en_ewt", "tagger": "", "parser": ""}
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts += [f"--{boundary}", f'Content-Disposition: form-data; name="{name}"',
                  "Content-Transfer-Encoding: 8bit", "Content-Type: text/plain; charset=utf-8",
                  "", value]
    parts += [f"--{boundary}--", ""]
    req = urllib.request.Request(
        server.url + "/udpipe/process", data="\r\n".join(parts).encode("utf-8"),
        headers={"Content-Type": f'multipart/form-data; boundary="{boundary}"'})
    with urllib.request.urlopen(req, timeout=60) as resp:
        body = json.loads(resp.read())
    assert [len(s.words) for s in trees(body["result"])] == [3, 3]
    with urllib.request.urlopen(server.url + "/udpipe/models", timeout=60) as resp:
        assert json.loads(resp.read())["default_model"] == "en_ewt"


def test_process_behind_the_api_key_models_open(serve):
    keyed = serve(workers=1, env={"DEPTREE_API_KEY": "s3cret-key-of-16-chars"})
    with keyed.client() as c:
        assert c.get("/udpipe/models").status_code == 200
        form = {"data": "A keyed test .", "input": "horizontal"}
        assert c.post("/udpipe/process", data=form).status_code == 401
        r = c.post("/udpipe/process", data=form, headers={"X-API-Key": "s3cret-key-of-16-chars"})
        assert r.status_code == 200 and len(trees(r.json()["result"])) == 1


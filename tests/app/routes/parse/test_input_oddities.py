"""Input oddities (issue 20, defect 8): invisible-only sentences are empty, U+2028 is no
line break, `parser=confidence=true` is a boolean, and an empty or short API key stops
the service at start instead of turning authentication off."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from models.conllu import read_conllu_string

ROOT = Path(__file__).resolve().parents[4]
# (id, text): zero-width space, BOM, word joiner, bidi override and isolate, soft hyphen
INVISIBLE = [("ZWSP", "\u200b"), ("BOM", "\ufeff"), ("WJ", "\u2060"),
             ("ZWSP BOM WJ", "\u200b\ufeff\u2060"), ("RLO PDF", "\u202e\u202c"),
             ("LRI PDI", "\u2066\u2069"), ("spaces ZWSP ZWJ", " \u200b \u200d "),
             ("SHY", "\u00ad")]


@pytest.fixture(scope="module")
def http(server):
    with server.client() as c:
        yield c


def code(r) -> str:
    assert r.status_code == 422, (r.status_code, r.text[:300])
    return r.json()["error"]["code"]


@pytest.mark.parametrize("s", [s for _, s in INVISIBLE], ids=[i for i, _ in INVISIBLE])
def test_invisible_only_sentence_is_empty_sentence(http, s):
    assert code(http.post("/parse", json={"sentences": [s]})) == "empty_sentence"
    assert code(http.post("/parse", json={"text": s})) == "empty_sentence"
    assert code(http.post("/parse", json={"sentences": [["A", s]]})) == "empty_token"
    r = http.post("/process", data={"data": f"A cat .\n{s}\n", "tokenizer": "presegmented"})
    assert code(r) == "empty_sentence"


def test_visible_text_around_invisible_characters_still_parses(http):
    for s in ("A\u200bcat sat .", "\u202eA cat sat .\u202c", "Cafe\u0301 ."):
        r = http.post("/parse", json={"sentences": [s], "decoder": "mst"})
        assert r.status_code == 200, r.text


def sentence_count(http, **fields) -> int:
    r = http.post("/process", data={**fields, "parser": "decoder=mst"})
    assert r.status_code == 200, r.text
    return len(read_conllu_string(r.json()["result"]))


def test_line_separator_does_not_split_sentences(http):
    """UDPipe breaks lines at \\n (and \\r\\n) only; U+2028 and U+2029 are spaces."""
    assert sentence_count(http, data="The cat\u2028sat .\r\nA dog\u2029barked .\n",
                          tokenizer="presegmented") == 2
    assert sentence_count(http, data="The cat\u2028sat .\nA dog barked .\n",
                          input="horizontal") == 2
    assert sentence_count(http, data="The\ncat\u2028\nsat\n\nA\ndog\n", input="vertical") == 2


@pytest.mark.parametrize("value", ["true", "false", "True"])
def test_process_parser_confidence_is_a_boolean(http, value):
    r = http.post("/process", data={"data": "The cat sat .", "input": "horizontal",
                                    "parser": f"decoder=greedy;confidence={value}"})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("key", ["", "short-key"])
def test_empty_or_short_api_key_is_refused_by_the_settings(key):
    from app.core.config import Settings

    with pytest.raises(ValueError, match="api_key"):
        Settings(api_key=key)
    Settings(api_key="a-long-enough-key-1")


def test_empty_api_key_stops_deptree_serve_at_start(tmp_path):
    """`DEPTREE_API_KEY=` (say, an unset shell variable in a unit file) used to serve
    /parse without authentication; now `deptree serve` exits with a message."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEPTREE_")}
    env["DEPTREE_API_KEY"] = ""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "app.serve_cli", "serve", "--port",
                             str(port)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError("deptree serve started with an empty API key") from None
    assert proc.returncode == 2, (out, err)
    assert "api_key" in err and "Traceback" not in err, err


CONLLU_LINE = "1\tThe\t_\t_\t_\t_\t_\t_\t_\t{misc}\n2\tcat\t_\t_\t_\t_\t_\t_\t_\t_\n\n"


@pytest.mark.parametrize("sep", ["\r", "\u2028", "\u2029"], ids=["CR", "LS", "PS"])
@pytest.mark.parametrize("where", ["misc", "comment", "form"])
def test_line_breaks_inside_conllu_columns_are_refused(http, sep, where):
    """/process writes CoNLL-U input back as it came: a \\r, U+2028 or U+2029 inside a
    column or comment would break the answer's lines for readers that split on universal
    newlines (Python's splitlines), so it is refused, naming the line (issue 61, defect 9).
    A \\r\\n line end is no such thing."""
    data = CONLLU_LINE.format(misc=f"a{sep}b" if where == "misc" else "_")
    if where == "comment":
        data = f"# note = a{sep}b\n" + data
    elif where == "form":
        data = data.replace("\tcat\t", f"\tc{sep}at\t")
    r = http.post("/process", data={"data": data, "parser": "decoder=mst"})
    assert code(r) in ("control_character", "line_separator")
    assert f"U+{ord(sep):04X}" in r.json()["error"]["message"]
    assert "line" in r.json()["error"]["message"]


def test_crlf_conllu_and_plain_misc_still_parse(http):
    data = CONLLU_LINE.format(misc="Note=a|SpaceAfter=No")
    for text in (data, data.replace("\n", "\r\n")):
        r = http.post("/process", data={"data": text, "parser": "decoder=mst"})
        assert r.status_code == 200, r.text
        out = r.json()["result"]
        assert "\r" not in out and out.splitlines() == out.split("\n")[:-1]


@pytest.mark.parametrize("sep", ["\u2028", "\u2029"], ids=["LS", "PS"])
def test_line_separator_inside_a_token_is_refused(http, sep):
    """A token is written into a CoNLL-U FORM column: a line separator in it is refused
    as \\r already is (between tokens, in raw text, it stays a space)."""
    r = http.post("/parse", json={"sentences": [["The", f"c{sep}at"]], "output": "conllu"})
    assert code(r) == "line_separator"
    r = http.post("/process", data={"data": f"The\nc{sep}at\n\n", "input": "vertical"})
    assert code(r) == "line_separator"

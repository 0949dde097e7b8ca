"""Every CoNLL-U output path passes the official UD validator (levels 1 and 2) on text
with line breaks, tabs, odd Unicode and multiword tokens: `deptree parse`, POST /parse
with output=conllu and POST /process; CoNLL-U input gets the model's tags unless
--gold-tags (issue 19, part 4)."""
from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from models.conllu import read_conllu_string
from models.serve.registry import resolve

ROOT = Path(__file__).resolve().parents[4]

# a sentence across a line break (the en_ewt text that broke `# text`), a tab, a no-break
# space, a line separator, a decomposed accent, a zero-width space, an emoji, Hebrew,
# tokens glued across a sentence end, and contractions (multiword tokens in EWT)
ODD = ("Watch from Mary Jo Foley ]\n(And, by the way, I don't know.)\tIt’s fine\u00a0really."
       "\n\nNew para:\u2028cafe\u0301s; Bush's 3rd \"quote\"end.  Zero\u200bwidth 😀 and"
       " שלום.\nDr. Smith can't come.I'm here\n")
UNTAGGED = ("# sent_id = a\n# text = I don't know.\n"
            "1\tI\t_\tX\t_\t_\t_\t_\t_\t_\n"
            "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
            "2\tdo\t_\tX\t_\t_\t_\t_\t_\t_\n"
            "3\tn't\t_\tX\t_\t_\t_\t_\t_\t_\n"
            "4\tknow\t_\tX\t_\t_\t_\t_\t_\tSpaceAfter=No\n"
            "5\t.\t_\tX\t_\t_\t_\t_\t_\t_\n\n")


def deptree(*args: str, stdin: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "deptree.cli", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def check_tokens(out: str, text: str) -> None:
    """Token lines (and multiword ranges) with TokenRange=a:b spell text[a:b]; the words
    of a range line carry no SpaceAfter or TokenRange of their own."""
    ranges = re.findall(r"^(\d+-\d+)?\d*\t([^\t]+)\t(?:[^\t]*\t){7}.*TokenRange=(\d+):(\d+)",
                        out, re.MULTILINE)
    assert ranges
    for _, form, a, b in ranges:
        assert unicodedata.normalize("NFC", text[int(a):int(b)]) == form
    for sent in read_conllu_string(out):
        inside = set()
        for line in sent.lines:
            if isinstance(line, str) and re.match(r"\d+-\d+\t", line):
                a, b = map(int, line.split("\t")[0].split("-"))
                inside |= set(range(a, b + 1))
        assert all(w.misc == "_" for w in sent.words if w.id in inside)


@pytest.fixture(scope="module")
def model(model_dirs) -> Path:
    return resolve("en_ewt", search_dirs=[Path(d) for d in model_dirs])


def test_cli_text_validates_with_multiword_tokens_and_spaceafter(model, ud_errors):
    out = deptree("parse", "--model", str(model), "--input", "text", "--decoder", "mst",
                  stdin=ODD)
    assert ud_errors(out) == []
    # a sentence across the line break keeps it as a space, on one comment line
    texts = [line for line in out.splitlines() if line.startswith("# text = ")]
    assert any("Foley ] (And" in t for t in texts) or (
        "# text = Watch from Mary Jo Foley ]" in texts
        and any(t.startswith("# text = (And, by the way") for t in texts)), texts
    assert re.search(r"^\d+-\d+\tdon't\t", out, re.MULTILINE)
    assert "SpaceAfter=No" in out
    check_tokens(out, ODD)


def test_cli_tokens_validates(model, ud_errors):
    out = deptree("parse", "--model", str(model), "--input", "tokens", stdin=
                  "Zero\u200bwidth cafe\u0301s 😀 !\nשלום .\n")
    assert ud_errors(out) == []
    assert read_conllu_string(out)[0].text == "Zero\u200bwidth cafés 😀 !"


def test_cli_conllu_writes_the_predicted_tags_unless_gold_tags(model, ud_errors):
    out = deptree("parse", "--model", str(model), "--decoder", "mst", stdin=UNTAGGED)
    words = read_conllu_string(out)[0].words
    assert ud_errors(out) == []
    assert [w.upos for w in words] == ["PRON", "AUX", "PART", "VERB", "PUNCT"]
    assert all(w.xpos != "_" and w.lemma != "_" for w in words)
    assert words[0].feats != "_" and words[3].misc == "SpaceAfter=No"
    assert "2-3\tdon't\t_" in out
    gold = deptree("parse", "--model", str(model), "--decoder", "mst", "--gold-tags",
                   stdin=UNTAGGED)
    assert [(w.upos, w.xpos, w.lemma, w.feats) for w in read_conllu_string(gold)[0].words] \
        == [("X", "_", "_", "_")] * 5


@pytest.fixture(scope="module")
def http(server):
    with server.client() as c:
        yield c


def test_parse_conllu_output_validates(http, ud_errors):
    for body in ({"text": ODD}, {"sentences": ["I don't know\nwhy.\tIt’s\u00a0so.",
                                               ["New York", "is", "cafe\u0301"]]}):
        r = http.post("/parse", json={**body, "output": "conllu"})
        assert r.status_code == 200, r.text
        assert ud_errors(r.text) == []
        assert re.search(r"^\d+-\d+\tdon't\t", r.text, re.MULTILINE)
    check_tokens(http.post("/parse", json={"text": ODD, "output": "conllu"}).text, ODD)


def test_parse_json_has_multiword_tokens_and_spaces(http):
    sent = http.post("/parse", json={"sentences": ["I don't know."]}).json()["sentences"][0]
    assert [t["form"] for t in sent["tokens"]] == ["I", "do", "n't", "know", "."]
    assert sent["multiword"] == [{"first": 2, "last": 3, "form": "don't", "start": 2,
                                  "end": 7}]
    assert [t["space_after"] for t in sent["tokens"]] == [True, False, True, False, True]


def test_process_output_validates(server, http, ud_errors):
    for fields in ({"data": ODD, "tokenizer": ""}, {"data": UNTAGGED, "tagger": ""},
                   {"data": "Zero\u200bwidth cafe\u0301s .\nI do n't\n", "input": "horizontal"}):
        r = http.post("/process", data={**fields, "model": "en_ewt"})
        assert r.status_code == 200, r.text
        assert ud_errors(r.json()["result"]) == [], r.json()["result"]
    out = http.post("/process", data={"data": ODD, "tokenizer": ""}).json()["result"]
    assert re.search(r"^\d+-\d+\tdon't\t", out, re.MULTILINE)
    check_tokens(out, ODD)

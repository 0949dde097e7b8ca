"""Property-based hostile input (hypothesis) against the running service.

Whatever the body, field values, characters, budgets or content type, every answer keeps
the contract of `check_answer` (no 5xx, JSON of the documented shape, a catalogue error
code with its status), and a 200 parses what was sent. Runs are derandomized (the same
examples on every run, as CI needs) and bounded to about a hundred requests per test.
"""
from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.conllu import read_conllu_string

FUZZ = settings(max_examples=100, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# characters that have broken text services: controls, lone surrogates, bidi overrides,
# zero-width and combining marks, BOM, line separators, astral emoji, NBSP
NASTY = ["\x00", "\x1b", "\x7f", "\x85", "\ud800", "\udfff", "\u202e", "\u200b", "\u200d",
         "\u0301", "\ufeff", "\u2028", "\u00a0", "\U0001F600", "\U0001F1EB", "\u05e9",
         "\u0627", "\uffff", "\U0010FFFF", " ", "\t", "\n", "\r", ".", "a"]
CHARS = st.one_of(st.characters(), st.sampled_from(NASTY))   # st.characters has no surrogates
TEXT = st.text(CHARS, max_size=40)
# mostly plain words (so that requests get past the text checks to the budgets and the
# workers), some of them in other scripts, now and then a word of any characters
PLAIN = st.sampled_from(["The", "cat", "sat", "on", "the", "mat", ".", "dogs", "run", ",",
                         "quickly", "!", "I", "see", "a", "big", "house", "?", "can't",
                         "U.S.", "e-mail", "3.5", "naïve", "Café", "東京", "שלום", "السلام",
                         "😀", "é", "(", '"'])
ANY_WORD = st.text(CHARS, min_size=1, max_size=8)


def mostly(good, bad, n: int = 3):
    """`good` n times as often as `bad`."""
    return st.one_of(*[good] * n, bad)


def _insert(words: list[str], odd: str | None, at: int) -> list[str]:
    return words if odd is None else words[:at] + [odd] + words[at:]


# token lists of plain words, one in five with one word of any characters in it
TOKENS = st.builds(_insert, st.lists(PLAIN, min_size=1, max_size=8),
                   mostly(st.none(), ANY_WORD, 4), st.integers(0, 8))
SENTENCE = TOKENS.map(" ".join)
WORD = mostly(PLAIN, ANY_WORD)

DECODERS = ["greedy", "mst", "sampling", "bgi", "selectional"]
BUDGET_KEYS = ["restarts", "converge", "init", "seed", "deadline_ms", "confidence", "samples",
               "temperature", "cooling", "chains", "proposal", "beam", "swaps", "alpha", "beta",
               "ensemble_with", "start", "margin"]
HUGE = [10**400, -10**400, 2**63, 2**64, -(2**63) - 1]
# values a decoder takes (small, so quick to decode) and values it must refuse
GOOD_VALUE = st.one_of(
    st.integers(1, 30), st.floats(0.05, 1.0), st.booleans(),
    st.sampled_from(["uniform", "first_order", "mst", "gibbs", "random_walk", "greedy"]))
BAD_VALUE = st.one_of(
    st.sampled_from(HUGE), st.sampled_from(HUGE),
    st.none(), st.integers(max_value=0), st.integers(min_value=10**5),
    st.floats(allow_nan=True, allow_infinity=True), TEXT, st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.none(), max_size=1))
BUDGET_VALUE = st.one_of(GOOD_VALUE, BAD_VALUE)

JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from(HUGE),
                        st.floats(allow_nan=True, allow_infinity=True), TEXT)
JSON_VALUE = st.recursive(JSON_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)), max_leaves=12)
FIELD = st.sampled_from(["sentences", "text", "model", "decoder", "output", *BUDGET_KEYS])
# a valid request with one field replaced by any JSON value
MUTATED = st.builds(lambda sents, k, v: {"sentences": sents, "restarts": 5, k: v},
                    st.lists(SENTENCE, min_size=1, max_size=2), st.one_of(FIELD, TEXT),
                    JSON_VALUE)


def dumps(body: object) -> bytes:
    """JSON as a hostile client writes it: NaN/Infinity literals, surrogates escaped."""
    return json.dumps(body, ensure_ascii=True, allow_nan=True).encode("ascii")


def form(fields: dict[str, str]) -> bytes:
    """urlencoded with lone surrogates kept as their (invalid) UTF-8 bytes."""
    return urlencode(fields, encoding="utf-8", errors="surrogatepass").encode("ascii")


def offsets_point_at_forms(sent_in: str, sent_out: dict) -> bool:
    return all(sent_in[t["start"]:t["end"]] == t["form"] for t in sent_out["tokens"])


@pytest.fixture(scope="session")
def decoder_fields(fuzz_http) -> dict[str, list[str]]:
    """Each decoder's budget fields, as the service lists them (GET /models)."""
    decs = fuzz_http.get("/models").json()["models"]["en_ewt"]["decoders"]
    return {name: d["fields"] for name, d in decs.items()}


@FUZZ
@given(body=st.one_of(MUTATED, MUTATED, JSON_VALUE,
                      st.dictionaries(st.one_of(FIELD, TEXT), JSON_VALUE, max_size=5)))
def test_any_json_body_to_parse(fuzz_http, check, body):
    check(fuzz_http.post("/parse", content=dumps(body),
                         headers={"content-type": "application/json"}))


@settings(FUZZ, max_examples=200)        # the widest space: decoders x fields x values
@given(sentences=st.lists(st.one_of(SENTENCE, TOKENS), min_size=1, max_size=2),
       decoder=mostly(st.sampled_from(DECODERS), st.one_of(st.none(), TEXT)),
       data=st.data())
def test_sentences_decoders_and_budgets(fuzz_http, check, decoder_fields, sentences, decoder,
                                        data):
    own = decoder_fields.get(decoder or "greedy", BUDGET_KEYS)
    keys = data.draw(st.lists(mostly(st.sampled_from(own), st.sampled_from(BUDGET_KEYS)),
                              max_size=3, unique=True), label="budget fields")
    budget = {k: data.draw(BUDGET_VALUE, label=k) for k in keys}
    body = {"sentences": sentences, **budget}
    if decoder is not None:
        body["decoder"] = decoder
    r = fuzz_http.post("/parse", content=dumps(body), headers={"content-type":
                                                               "application/json"})
    answer = check(r)
    if r.status_code == 200:
        assert len(answer["sentences"]) == len(sentences)
        for s_in, s_out in zip(sentences, answer["sentences"]):
            if isinstance(s_in, list):
                assert [t["form"] for t in s_out["tokens"]] == s_in
            else:
                assert offsets_point_at_forms(s_in, s_out), (s_in, s_out["tokens"])
            heads = [t["head"] for t in s_out["tokens"]]
            assert heads.count(0) == 1 and all(0 <= h <= len(heads) for h in heads)


@FUZZ
@given(text=mostly(st.lists(SENTENCE, max_size=6).map(" ".join),
                  st.text(CHARS, max_size=300), 2),
       decoder=st.sampled_from(DECODERS))
def test_any_text(fuzz_http, check, text, decoder):
    r = fuzz_http.post("/parse", content=dumps({"text": text, "decoder": decoder}),
                       headers={"content-type": "application/json"})
    answer = check(r)
    if r.status_code == 200:
        for s in answer["sentences"]:
            assert offsets_point_at_forms(text, s)


CTYPES = [None, "application/json", "text/plain", "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=xyz", "multipart/form-data", "application/xml",
          "application/json; charset=latin-1", "*/*", ""]


@FUZZ
@given(raw=st.one_of(st.binary(max_size=400), st.builds(dumps, JSON_VALUE)),
       ctype=st.sampled_from(CTYPES), path=st.sampled_from(["/parse", "/process"]))
def test_any_bytes_with_any_content_type(fuzz_http, check, raw, ctype, path):
    headers = {} if ctype is None else {"content-type": ctype}
    check(fuzz_http.post(path, content=raw, headers=headers))


PARSER_OPTION = st.builds(lambda k, v: f"{k}={v}",
                          st.sampled_from(["decoder", *BUDGET_KEYS, "x"]),
                          st.one_of(st.sampled_from(DECODERS), st.integers(-5, 40),
                                    st.sampled_from(["1e309", "nan", "-inf", "1" + "0" * 400,
                                                     "", "0x10", "1_0"]),
                                    st.text(CHARS, max_size=5)))


@FUZZ
@given(data=st.one_of(SENTENCE, SENTENCE, TEXT, st.lists(TOKENS, max_size=3)),
       extra=st.fixed_dictionaries({}, optional={
           "tokenizer": st.sampled_from(["", "presegmented", "ranges"]),
           "input": mostly(st.sampled_from(["conllu", "horizontal", "vertical"]), TEXT),
           "tagger": st.just(""), "model": mostly(st.sampled_from(["en", "en_ewt"]), TEXT),
           "output": mostly(st.just("conllu"), TEXT),
           "parser": st.lists(PARSER_OPTION, max_size=2).map(";".join)}),
       how=st.sampled_from(["form", "json", "query", "multipart"]))
def test_process_any_fields(fuzz_http, check, data, extra, how):
    if isinstance(data, list):     # token lists as vertical CoNLL-U-like lines or horizontal
        data = "\n\n".join("\n".join(f"{i}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_"
                                     for i, w in enumerate(s, 1)) for s in data) + "\n\n"
    fields = {"data": data, **extra}
    if how == "form":
        r = fuzz_http.post("/process", content=form(fields),
                           headers={"content-type": "application/x-www-form-urlencoded"})
    elif how == "json":
        r = fuzz_http.post("/process", content=dumps(fields),
                           headers={"content-type": "application/json"})
    elif how == "query":
        r = fuzz_http.get("/process?" + form(fields).decode("ascii"))
    else:
        parts = {k: (None, v.encode("utf-8", "surrogatepass")) for k, v in fields.items()}
        r = fuzz_http.post("/process", files=parts)
    answer = check(r)
    if r.status_code == 200:
        for sent in read_conllu_string(answer["result"]):
            heads = [w.head for w in sent.words]
            assert heads.count(0) == 1 and all(0 <= h <= len(heads) for h in heads)


def test_service_survived(survivor, fuzz_http):
    survivor.check(fuzz_http)

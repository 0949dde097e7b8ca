"""The Python API (issue 63, item 7): `deptree.load` on the real model in this process,
and `deptree.Client` against a real `deptree serve`, giving the same `Sentence` values."""
from __future__ import annotations

import pytest

import deptree

TEXT = "The cat sat on the mat. It was happy."
TOKENS = [["The", "old", "dog", "barked", "at", "the", "mail", "carrier", "."],
          ["She", "did", "n't", "see", "him", "."]]


@pytest.fixture(scope="module")
def nlp(model_dirs):
    with deptree.load("en_ewt", model_dirs=model_dirs) as parser:
        yield parser


def is_tree(sent: deptree.Sentence) -> bool:
    heads = sent.heads
    return sum(h == 0 for h in heads) == 1 and all(0 <= h <= len(heads) for h in heads)


def test_raw_text_is_split_tokenized_and_parsed_with_offsets(nlp):
    sents = nlp.parse(TEXT, decoder="mst", tagger="fast")
    assert [s.text for s in sents] == ["The cat sat on the mat.", "It was happy."]
    assert all(is_tree(s) for s in sents)
    for s in sents:
        for w in s.words:
            assert TEXT[w.start:w.end] == w.form and w.upos != "_" and w.deprel
    assert sents[0].stats["seconds"] > 0 and sents[0].words[0].confidence is None


def test_token_lists_and_conllu_give_the_same_trees(nlp, ud_errors):
    by_tokens = nlp.parse(tokens=TOKENS, decoder="mst")
    assert [[w.form for w in s.words] for s in by_tokens] == TOKENS
    text = deptree.to_conllu(by_tokens)
    assert ud_errors(text) == []
    by_conllu = nlp.parse(conllu=text, decoder="mst")
    assert [(s.heads, s.deprels) for s in by_conllu] == [(s.heads, s.deprels) for s in by_tokens]


def test_budget_fields_are_keywords_and_confidence_comes_per_word(nlp):
    (sent,) = nlp.parse(tokens=TOKENS[:1], decoder="greedy", restarts=20, confidence=True)
    assert all(0 < w.confidence <= 1 for w in sent.words)
    assert "HeadConf=" in sent.to_conllu()
    assert set(nlp.decoders) >= {"greedy", "mst"} and "restarts" in str(nlp.decoders["greedy"])


def test_a_refused_request_is_a_parse_error_with_the_services_code(nlp):
    with pytest.raises(deptree.ParseError) as err:
        nlp.parse("A cat .", decoder="greedy", restarts=-1)
    assert err.value.code == "invalid_budget" and "restarts" in err.value.message
    with pytest.raises(deptree.ParseError) as err:
        nlp.parse("A cat .", decoder="nope")
    assert err.value.status is None
    with pytest.raises(TypeError, match="exactly one"):
        nlp.parse("A cat .", tokens=TOKENS)
    with pytest.raises(TypeError, match="list of sentences"):
        nlp.parse(tokens=["A", "cat"])


def test_the_client_gives_the_trees_the_model_gives_in_process(nlp, server):
    svc = deptree.Client(server.url)
    assert "en_ewt" in svc.models() and svc.ready()
    for decoder, tagger in (("mst", "fast"), ("selectional", None)):
        local = nlp.parse(tokens=TOKENS, decoder=decoder, **({"tagger": tagger} if tagger else {}))
        remote = svc.parse(tokens=TOKENS, decoder=decoder, tagger=tagger)
        assert [(s.heads, s.deprels, [w.upos for w in s.words]) for s in remote] == \
            [(s.heads, s.deprels, [w.upos for w in s.words]) for s in local], decoder
    (sent, _) = svc.parse(TEXT, decoder="mst", tagger="fast")
    assert sent.text == "The cat sat on the mat." and sent.words[1].start == 4


def test_the_clients_refusals_carry_the_http_status_and_code(server):
    svc = deptree.Client(server.url)
    with pytest.raises(deptree.ParseError) as err:
        svc.parse("A cat .", decoder="greedy", restarts=-1)
    assert err.value.status == 422 and err.value.code == "invalid_budget"
    with pytest.raises(deptree.ParseError) as err:
        deptree.Client("http://127.0.0.1:9", timeout=5).parse("A cat .")
    assert err.value.code == "unreachable" and err.value.status is None

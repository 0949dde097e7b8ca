from __future__ import annotations

from models.text.lexicon import Lexicon
from models.text.splitter import SentenceSplitter, render_document
from models.text.tokenizer import Tokenizer


def test_render_document_spans():
    text, spans = render_document([["A b.", "C d."], ["E."]])
    assert text == "A b. C d.\n\nE."
    assert [text[a:b] for a, b in spans] == ["A b.", "C d.", "E."]


def _synthetic_docs(tok: Tokenizer):
    subjects = ["The cat", "Dr. Who", "My friend", "It", "We", "They", "Mr. Lee", "This"]
    verbs = ["sleeps", "works here", "said no", "is fine", "left at noon", "was late"]
    ends = [".", "!", "?", "."]
    docs = []
    for d in range(40):
        sents = [f"{subjects[(d + i) % 8]} {verbs[(d * 3 + i) % 6]}{ends[(d + i) % 4]}"
                 for i in range(5)]
        text, spans = render_document([sents[:3], sents[3:]])
        docs.append((text, tok.tokenize_sentence(text), {e for _, e in spans}))
    return docs


def test_splitter_learns_boundaries_and_round_trips(tmp_path):
    lex = Lexicon(abbreviations={"dr.", "mr."})
    tok = Tokenizer(lex)
    splitter = SentenceSplitter(abbreviations=lex.abbreviations, n_bits=14)
    splitter.train(_synthetic_docs(tok), epochs=4, seed=0)
    tok.splitter = splitter
    text = "Mr. Lee sleeps. Dr. Who was late! We said no? My friend is fine."
    sents = [[t.form for t in s] for s in tok.tokenize(text)]
    assert sents == [["Mr.", "Lee", "sleeps", "."], ["Dr.", "Who", "was", "late", "!"],
                     ["We", "said", "no", "?"], ["My", "friend", "is", "fine", "."]]
    tok.save(str(tmp_path))
    again = Tokenizer.load(str(tmp_path))
    assert again.tokenize(text) == tok.tokenize(text)


def test_shipped_splitter_on_a_paragraph(shipped_dir):
    tok = Tokenizer.load(f"{shipped_dir}/tokenizer")
    text = ("Dr. Smith arrived at the U.S. embassy on Monday. He was late! "
            "Why did nobody call him? The meeting had started at 9 a.m. sharp.")
    sents = tok.tokenize(text)
    assert [text[s[0].start:s[-1].end] for s in sents] == [
        "Dr. Smith arrived at the U.S. embassy on Monday.", "He was late!",
        "Why did nobody call him?", "The meeting had started at 9 a.m. sharp."]

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


def test_splitter_learns_boundaries_without_punctuation():
    """EWT web text often ends a sentence with no punctuation and starts the next
    in lowercase: every gap is a candidate, not only gaps after . ! ?"""
    tok = Tokenizer(Lexicon())
    firsts = ["the cat sleeps", "my friend works here", "it was late", "lol that was fun"]
    seconds = ["we said no", "they left at noon", "thanks a lot", "see you there"]
    docs = []
    for d in range(40):
        sents = [firsts[(d + i) % 4] if i % 2 == 0 else seconds[(d * 3 + i) % 4]
                 for i in range(6)]
        text, spans = render_document([sents])
        docs.append((text, tok.tokenize_sentence(text), {e for _, e in spans}))
    splitter = SentenceSplitter(n_bits=14)
    splitter.train(docs, epochs=4, seed=0)
    tok.splitter = splitter
    text = "it was late we said no my friend works here see you there"
    assert [text[s[0].start:s[-1].end] for s in tok.tokenize(text)] == [
        "it was late", "we said no", "my friend works here", "see you there"]


def test_shipped_splitter_without_final_punctuation(shipped_dir):
    """Web text: a title with no full stop, a greeting, a signature, a lowercase start."""
    tok = Tokenizer.load(f"{shipped_dir}/tokenizer")
    cases = {
        "Hi John\n\nCan you send me the report by Friday? Thanks\nMary":
            ["Hi John", "Can you send me the report by Friday?", "Thanks", "Mary"],
        "Lovely Cottage This cottage is a charming home.":
            ["Lovely Cottage", "This cottage is a charming home."],
        "The food was great. the staff were friendly":
            ["The food was great.", "the staff were friendly"],
    }
    for text, expected in cases.items():
        assert [text[s[0].start:s[-1].end] for s in tok.tokenize(text)] == expected


def test_a_blank_line_always_ends_a_sentence(shipped_dir):
    """The shipped splitter alone joins these two (the splitter of 2026-12 splits EWT
    dev's "love this park / this is a great park to have" itself, but not this one, which
    starts with "and"); a blank line is a paragraph's end, so the service splits there as
    `deptree parse --input text` does."""
    tok = Tokenizer.load(f"{shipped_dir}/tokenizer")
    text = "the staff was friendly\n\nand the rooms were clean"
    toks = tok.tokenize_sentence(text)
    assert tok.splitter.boundaries(text, toks) == [len(toks) - 1]
    sents = tok.tokenize(text)
    assert [text[s[0].start:s[-1].end] for s in sents] == [
        "the staff was friendly", "and the rooms were clean"]
    # a line break alone: the splitter's
    one_line = "the staff was friendly\nand the rooms were clean"
    assert len(tok.tokenize(one_line)) == 1


def test_blank_lines_split_without_a_splitter():
    tok = Tokenizer(Lexicon())
    text = "a b\n \t\nc d\ne f\n\n\n g"
    assert [[t.form for t in s] for s in tok.tokenize(text)] == [
        ["a", "b"], ["c", "d", "e", "f"], ["g"]]

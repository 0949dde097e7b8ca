"""CoNLL-U reading, writing, round trips on the shared treebanks, errors and trees."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from models.conllu import (
    Sentence,
    Word,
    format_sentence,
    read_conllu,
    read_conllu_string,
    validate_tree,
    write_conllu,
)
from models.errors import ConlluError, DeptreeError, TreeError

DATA = Path(__file__).parents[2].parent / "shared" / "data"
TREEBANKS = ["en_ewt/train.conllu", "en_ewt/dev.conllu", "nl_lassysmall/train.conllu"]


def row(i, form, head, deprel="dep", upos="NOUN", misc="_"):
    head = "_" if head is None else head
    return f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t_\t{head}\t{deprel}\t_\t{misc}"


SAMPLE = "\n".join([
    "# newdoc id = doc1",
    "# sent_id = 1",
    "# text = Don't go.",
    "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_",
    row(1, "Do", 3, "aux", "AUX"),
    row(2, "n't", 3, "advmod", "PART"),
    row(3, "go", 0, "root", "VERB", "SpaceAfter=No"),
    "3.1\tgo\tgo\tVERB\t_\t_\t_\t_\t3:conj\tCopyOf=3",
    row(4, ".", 3, "punct", "PUNCT"),
    "",
    "# sent_id = 2",
    "# text = Yes",
    row(1, "Yes", 0, "root", "INTJ"),
    "",
    "",
])


# --- round trips -----------------------------------------------------------------


@pytest.mark.parametrize("name", TREEBANKS)
def test_round_trip_treebank_is_byte_identical(name, tmp_path):
    path = DATA / name
    if not path.exists():
        pytest.skip(f"treebank {path} not found (shared/data is laid beside the repository)")
    sents = list(read_conllu(path))
    assert sents and all(s.words for s in sents)
    out = tmp_path / "out.conllu"
    write_conllu(sents, out)
    assert out.read_bytes() == path.read_bytes()


def test_round_trip_sample_keeps_multiword_tokens_and_empty_nodes():
    sents = read_conllu_string(SAMPLE)
    assert len(sents) == 2
    first = sents[0]
    assert [w.form for w in first.words] == ["Do", "n't", "go", "."]
    assert first.lines[3] == "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_"
    assert first.lines[7].startswith("3.1\t")
    assert first.lines[4:7] == [0, 1, 2]
    assert first.comments == ["# newdoc id = doc1", "# sent_id = 1", "# text = Don't go."]
    assert first.text == "Don't go."
    assert first.start_line == 1 and sents[1].start_line == 11
    assert "".join(map(format_sentence, sents)) == SAMPLE


def test_format_sentence_ends_with_empty_line():
    sent = read_conllu_string(SAMPLE)[1]
    expected = "# sent_id = 2\n# text = Yes\n" + row(1, "Yes", 0, "root", "INTJ") + "\n\n"
    assert format_sentence(sent) == expected


def test_missing_final_blank_line_and_newline():
    text = SAMPLE.rstrip("\n")
    sents = read_conllu_string(text)
    assert len(sents) == 2
    assert "".join(map(format_sentence, sents)) == SAMPLE


def test_crlf_is_read_and_written_as_lf():
    sents = read_conllu_string(SAMPLE.replace("\n", "\r\n"))
    assert "".join(map(format_sentence, sents)) == SAMPLE


def test_crlf_file_path(tmp_path):
    path = tmp_path / "crlf.conllu"
    path.write_bytes(SAMPLE.replace("\n", "\r\n").encode())
    assert [len(s.words) for s in read_conllu(path)] == [4, 1]


def test_byte_order_mark_is_kept(tmp_path):
    path = tmp_path / "bom.conllu"
    path.write_bytes(b"\xef\xbb\xbf" + SAMPLE.encode())
    sents = list(read_conllu(path))
    assert sents[0].comments[0] == "# newdoc id = doc1"
    assert sents[0].bom and not sents[1].bom
    out = tmp_path / "out.conllu"
    write_conllu(sents, out)
    assert out.read_bytes() == path.read_bytes()


def test_byte_order_mark_before_a_word_line():
    sents = read_conllu_string("\ufeff" + row(1, "Yes", 0, "root") + "\n\n")
    assert sents[0].words[0].id == 1 and sents[0].bom


def test_write_to_file_object_and_read_from_file_object():
    buf = io.StringIO()
    write_conllu(read_conllu_string(SAMPLE), buf)
    assert buf.getvalue() == SAMPLE
    assert len(list(read_conllu(io.StringIO(SAMPLE)))) == 2


def test_heads_and_set_tree():
    sent = read_conllu_string(SAMPLE)[0]
    heads = sent.heads()
    assert heads.dtype == np.int64
    assert heads.tolist() == [-1, 3, 3, 0, 3]
    sent.set_tree(np.array([-1, 2, 0, 2, -1]), ["", "nsubj", "root", "obj", "punct"])
    assert [(w.head, w.deprel) for w in sent.words] == [
        (2, "nsubj"), (0, "root"), (2, "obj"), (None, "punct"),
    ]
    assert sent.heads().tolist() == [-1, 2, 0, 2, -1]
    line = format_sentence(sent).splitlines()[8]
    assert line.split("\t")[6:8] == ["_", "punct"]
    # other lines are unchanged
    assert format_sentence(sent).splitlines()[3] == "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_"


def test_set_tree_keeps_deprels_when_none():
    sent = read_conllu_string(SAMPLE)[0]
    sent.set_tree([-1, 3, 3, 0, 3], None)
    assert [w.deprel for w in sent.words] == ["aux", "advmod", "root", "punct"]


@pytest.mark.parametrize(
    "heads, deprels",
    [([-1, 0], ["", "root"]), ([-1, 0, 1, 1, 9], None), ([-1, 3, 3, 0, 3], ["root"])],
)
def test_set_tree_rejects_bad_arrays(heads, deprels):
    sent = read_conllu_string(SAMPLE)[0]
    with pytest.raises(ValueError):
        sent.set_tree(heads, deprels)


def test_head_underscore_reads_as_none_and_minus_one():
    sent = read_conllu_string(row(1, "Hi", None) + "\n" + row(2, "!", 1) + "\n\n")[0]
    assert sent.words[0].head is None
    assert sent.heads().tolist() == [-1, -1, 1]
    assert format_sentence(sent).split("\n")[0].split("\t")[6] == "_"


def test_from_words_builds_a_writable_sentence():
    words = [Word(1, "Hi", "hi", "INTJ", "_", "_", 0, "root", "_", "_")]
    sent = Sentence.from_words(words, ["# text = Hi"])
    assert format_sentence(sent) == "# text = Hi\n" + row(1, "Hi", 0, "root", "INTJ") + "\n\n"
    assert sent.text == "Hi"


# --- malformed input: ConlluError with file and line -----------------------------


GOOD = [row(1, "a", 2), row(2, "b", 0)]


def _file(*block_lines):
    """Two blocks: a good one on lines 1-3, then lines 5.. with `block_lines` after a comment."""
    first = "# sent_id = 1\n" + "\n".join(GOOD) + "\n\n"
    return first + "# sent_id = 2\n" + "\n".join(block_lines) + "\n\n"


@pytest.mark.parametrize(
    "text, line_no, fragment",
    [
        # second block starts on line 5: comment on 5, first word on 6
        (_file(row(1, "a", 0).replace("\t_\t_\t0", "\t_\t0")), 6,
         "expected 10 tab-separated columns, found 9"),
        (_file(row(1, "a", 0) + "\t_"), 6, "found 11"),
        (_file(row(1, "a", 0).replace("\t", "  ")), 6, "found 1"),
        (_file(row(1, "a", 0), row(2, "b", "x")), 7, "HEAD 'x' is not an integer"),
        (_file(row(1, "a", 0), row(2, "b", "")), 7, "HEAD '' is not an integer"),
        (_file(row(1, "a", 0), row(2, "b", "01")), 7,
         "HEAD '01' is not written in canonical form"),
        (_file(row("x", "a", 0)), 6, "ID 'x' is not an integer"),
        (_file(row("1.", "a", 0)), 6, "ID '1.' is not an integer"),
        (_file(row(2, "a", 0)), 6, "word ID 2 out of order: expected 1"),
        (_file(row(1, "a", 0), row(3, "b", 1)), 7, "word ID 3 out of order: expected 2"),
        (_file(row(1, "a", 0), row(1, "b", 1)), 7, "word ID 1 out of order: expected 2"),
        (_file(row(1, "a", 0), row(2, "b", 3)), 7, "HEAD 3 of word 2 is out of range 0..2"),
        (_file(row(1, "a", 0), row(2, "b", -1)), 7, "HEAD -1 of word 2 is out of range 0..2"),
        (_file(row(1, "a", 0), row(2, "", 1)), 7, "empty FORM in word 2"),
        (_file("1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_"), 5, "sentence has no words"),
    ],
)
def test_malformed_line_raises_with_line_number(text, line_no, fragment):
    with pytest.raises(ConlluError) as info:
        read_conllu_string(text, path_name="dev.conllu")
    err = info.value
    assert isinstance(err, DeptreeError)
    assert (err.path, err.line_no) == ("dev.conllu", line_no)
    assert fragment in err.message
    assert str(err).startswith(f"dev.conllu:{line_no}: ")
    assert fragment in str(err)


def test_error_names_the_file_path(tmp_path):
    path = tmp_path / "dev.conllu"
    path.write_text(_file(row(1, "a", 0), row(2, "b", "x")), encoding="utf-8")
    with pytest.raises(ConlluError, match=r"dev\.conllu:7: HEAD 'x' is not an integer \[E003\]"):
        list(read_conllu(path))


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "latin1.conllu"
    path.write_bytes(_file(row(1, "café", 0)).encode("latin-1"))
    with pytest.raises(ConlluError) as info:
        list(read_conllu(path))
    assert info.value.line_no == 6 and "not valid UTF-8" in str(info.value)


def test_missing_file_is_a_conllu_error(tmp_path):
    with pytest.raises(ConlluError, match="cannot read file"):
        list(read_conllu(tmp_path / "nope.conllu"))


def test_errors_are_raised_lazily_after_good_sentences():
    sents = read_conllu(io.StringIO(_file(row(1, "a", 0), row(2, "b", "x"))), path_name="f")
    assert len(next(sents).words) == 2
    with pytest.raises(ConlluError):
        next(sents)


# --- gold trees --------------------------------------------------------------------


def _sent(heads):
    rows = [row(i, f"w{i}", h) for i, h in enumerate(heads, 1)]
    text = "# sent_id = t\n" + "\n".join(rows) + "\n\n"
    return read_conllu_string("\n" + text, path_name="gold.conllu")[0]  # block starts at line 2


def test_validate_tree_accepts_sample_and_treebank_sentences():
    for sent in read_conllu_string(SAMPLE):
        validate_tree(sent)
    path = DATA / "en_ewt" / "dev.conllu"
    if not path.exists():
        pytest.skip(f"treebank {path} not found (shared/data is laid beside the repository)")
    for sent in read_conllu(path):
        validate_tree(sent)


@pytest.mark.parametrize(
    "heads, line_no, fragment",
    [
        # line 2 is the comment, word i is on line 2 + i
        ([2, None, 2], 4, "word 2 'w2' has no head"),
        ([2, 3, 1], 2, "no word is attached to the root"),
        ([0, 1, 0], 5, "2 words are attached to the root (HEAD 0): 1 'w1', 3 'w3'"),
        ([0, 3, 4, 2], 4, "cycle: 2 'w2' -> 3 'w3' -> 4 'w4' -> 2 'w2'"),
        ([0, 2], 4, "cycle: 2 'w2' -> 2 'w2'"),
    ],
)
def test_validate_tree_errors_name_the_line(heads, line_no, fragment):
    with pytest.raises(TreeError) as info:
        validate_tree(_sent(heads))
    assert (info.value.path, info.value.line_no) == ("gold.conllu", line_no)
    assert fragment in str(info.value)
    assert str(info.value).startswith(f"gold.conllu:{line_no}: ")


def test_validate_tree_head_out_of_range_set_by_hand():
    sent = _sent([0, 1])
    sent.words[1].head = 5
    message = r"gold\.conllu:4: word 2 'w2' has HEAD 5, out of range 0\.\.2"
    with pytest.raises(TreeError, match=message):
        validate_tree(sent)


def test_validate_tree_of_sentence_built_in_memory_has_no_line():
    words = [Word(1, "a", "a", "X", "_", "_", 0, "root", "_", "_"),
             Word(2, "b", "b", "X", "_", "_", 0, "root", "_", "_")]
    with pytest.raises(TreeError) as info:
        validate_tree(Sentence.from_words(words))
    assert info.value.line_no is None

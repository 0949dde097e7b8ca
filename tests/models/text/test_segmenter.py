"""Scripts written without spaces: a treebank whose tokens meet inside runs of letters
trains a segmenter, and the tokenizer cuts those runs into its tokens; a spaced
treebank trains none, and its tokenizer is unchanged."""
from __future__ import annotations

import re

from models.text._conllu import read_conllu
from models.text.segmenter import WordSegmenter
from models.text.tokenizer import Tokenizer
from models.text.train import evaluate_tokenizer, train_tokenizer
from tests.conftest import TINY_TREEBANK


def _without_spaces(src, dst) -> None:
    """The treebank as if its script had no spaces: no `# text` lines (the reader
    rebuilds them from the tokens) and SpaceAfter=No on every token."""
    out, inside = [], 0
    for line in open(src, encoding="utf-8"):
        line = line.rstrip("\n")
        cols = line.split("\t")
        if line.startswith("# text"):
            continue
        if len(cols) == 10 and re.fullmatch(r"\d+(-\d+)?", cols[0]):
            if "-" in cols[0]:
                inside = int(cols[0].split("-")[1])
            elif int(cols[0]) <= inside:              # a word of a multiword token
                out.append(line)
                continue
            misc = [m for m in cols[9].split("|") if m not in ("_", "SpaceAfter=No")]
            cols[9] = "|".join(misc + ["SpaceAfter=No"])
            line = "\t".join(cols)
        elif not line:
            inside = 0
        out.append(line)
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")


def test_runs_of_letters_are_cut_into_the_treebanks_tokens(tmp_path):
    _without_spaces(TINY_TREEBANK, tmp_path / "nospace.conllu")
    sents = read_conllu(str(tmp_path / "nospace.conllu"))
    assert " " not in sents[0].text
    tok = train_tokenizer(sents)
    assert tok.segmenter is not None
    # seen sentences, 40 of them: most tokens come back (the scanner alone gets ~30%)
    assert evaluate_tokenizer(tok, sents)["token_f1"] > 0.9
    alone = evaluate_tokenizer(Tokenizer(tok.lexicon, tok.splitter), sents)["token_f1"]
    assert alone < 0.5
    tok.save(str(tmp_path / "tok"))
    back = Tokenizer.load(str(tmp_path / "tok"))
    text = sents[3].text
    assert [t.form for t in back.tokenize_sentence(text)] == \
        [t.form for t in tok.tokenize_sentence(text)]


def test_a_spaced_treebank_trains_no_segmenter_nor_joiner(tmp_path):
    """Its tokens meet only at spaces and never contain one (`joiner.py`)."""
    sents = read_conllu(str(TINY_TREEBANK))
    tok = train_tokenizer(sents)
    assert tok.segmenter is None and tok.joiner is None
    tok.save(str(tmp_path / "tok"))
    back = Tokenizer.load(str(tmp_path / "tok"))
    assert back.segmenter is None and back.joiner is None


def test_cuts_fall_only_between_letters_or_digits():
    seg = WordSegmenter()
    seg.weights[:] = 1.0                               # every gap it may cut, it cuts
    assert seg.cuts("ab_c1") == [1, 4]                 # not next to "_"
    assert seg.cuts("e\u0301t") == []                  # nor before a combining mark


def test_a_long_run_is_cut_lazily_up_to_the_token_cap(monkeypatch):
    from models.text import segmenter

    seen = []
    real = segmenter.gap_features
    monkeypatch.setattr(segmenter, "gap_features", lambda run, i, bits: seen.append(i)
                        or real(run, i, bits))
    seg = WordSegmenter()
    seg.weights[:] = 1.0
    out = Tokenizer(segmenter=seg).tokenize_sentence("a" * 200_000, limit=10)
    assert len(out) == 11 and [t.form for t in out[:2]] == ["a", "a"]
    assert len(seen) < 100                      # not the 199,999 gaps of the run

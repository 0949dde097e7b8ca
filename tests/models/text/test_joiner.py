"""Tokens with spaces inside (Vietnamese "Hà Nội"): a treebank that has many trains a
joiner, and the tokenizer keeps those pieces together (a treebank without them trains
none: test_segmenter.py checks both on the tiny treebank)."""
from __future__ import annotations

import random

from models.text._conllu import read_conllu
from models.text.joiner import MAX_PIECES, SpaceJoiner
from models.text.tokenizer import Tokenizer
from models.text.train import evaluate_tokenizer, train_tokenizer

WORDS = ["Hà Nội", "sinh viên", "thành phố", "đại học", "Việt Nam", "tôi", "học", "là",
         "của", "ở", "và", "đẹp", "lớn", "có", "nhiều"]


def _spaced_treebank(path, n: int = 80, seed: int = 0) -> None:
    """n sentences of WORDS, some of whose tokens contain a space; "học" also stands
    alone, so the joiner must look at both sides of a gap."""
    rng = random.Random(seed)
    lines = []
    for k in range(n):
        forms = [rng.choice(WORDS) for _ in range(rng.randint(3, 9))] + ["."]
        forms[0] = forms[0][0].upper() + forms[0][1:]
        lines.append(f"# sent_id = s{k}")
        lines.append("# text = " + " ".join(forms[:-1]) + ".")
        for i, f in enumerate(forms, 1):
            misc = "SpaceAfter=No" if i == len(forms) - 1 else "_"
            upos = "PUNCT" if f == "." else "NOUN"
            head, rel = (0, "root") if i == 1 else (1, "punct" if f == "." else "dep")
            lines.append(f"{i}\t{f}\t{f.lower()}\t{upos}\t_\t_\t{head}\t{rel}\t_\t{misc}")
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_pieces_the_treebank_keeps_as_one_token_stay_together(tmp_path):
    _spaced_treebank(tmp_path / "train.conllu")
    _spaced_treebank(tmp_path / "dev.conllu", n=30, seed=1)
    tok = train_tokenizer(read_conllu(str(tmp_path / "train.conllu")))
    assert tok.joiner is not None
    dev = read_conllu(str(tmp_path / "dev.conllu"))
    assert evaluate_tokenizer(tok, dev)["token_f1"] > 0.97
    without = Tokenizer(tok.lexicon, tok.splitter)
    assert evaluate_tokenizer(without, dev)["token_f1"] < 0.8

    text = "Tôi học ở Hà Nội và đại học của tôi là lớn."
    out = tok.tokenize_sentence(text)
    assert [t.form for t in out] == ["Tôi", "học", "ở", "Hà Nội", "và", "đại học", "của",
                                     "tôi", "là", "lớn", "."]
    assert all(text[t.start:t.end] == t.form for t in out)
    assert [t.space_after for t in out][-2:] == [False, True]
    tok.save(str(tmp_path / "tok"))
    back = Tokenizer.load(str(tmp_path / "tok"))
    assert back.joiner is not None
    assert back.tokenize_sentence(text) == out


def test_joins_only_spaces_on_one_line_between_letters_or_digits():
    joiner = SpaceJoiner()
    joiner.weights[:] = 1.0                           # every gap it may join, it joins
    tok = Tokenizer(joiner=joiner)
    assert [t.form for t in tok.tokenize_sentence("a b\nc, d 1")] == \
        ["a b", "c", ",", "d 1"]


def test_a_token_joins_at_most_max_pieces_and_the_token_cap_holds():
    joiner = SpaceJoiner()
    joiner.weights[:] = 1.0
    out = Tokenizer(joiner=joiner).tokenize_sentence("a " * 200_000, limit=10)
    assert len(out) == 11
    assert out[0].form == " ".join(["a"] * MAX_PIECES)

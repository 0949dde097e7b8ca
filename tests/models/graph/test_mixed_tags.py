"""`deptree train-graph --mixed-tags`: gold and jackknifed copies of the training data."""
from __future__ import annotations

import subprocess
import sys


def _deptree(*args):
    return subprocess.run([sys.executable, "-m", "deptree.cli", *args], capture_output=True,
                          text=True, timeout=600)


def test_mixed_tags_train_on_gold_then_jackknifed_copies(tmp_path, monkeypatch):
    """`deptree train-graph --mixed-tags`: each sentence once with its gold tags, then
    again with its jackknifed ones (here a stand-in tagger that says NOUN/NN)."""
    import models.text.jackknife as jk
    from models.graph.encode import A_UPOS, upos_id
    from models.graph.train import read_examples

    path = tmp_path / "t.conllu"
    path.write_text("1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n"
                    "1\tGo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n\n")
    monkeypatch.setattr(jk, "jackknife_tags",
                        lambda sents, k, seed, train_fn=None, checkpoints=None:
                        [(["NOUN"] * len(s), ["NN"] * len(s)) for s in sents])
    examples, labels = read_examples(path, jackknife=2, mixed=True)
    assert len(examples) == 4 and set(labels) == {"root", "punct"}
    tags = [list(e.enc.attrs[1:, A_UPOS]) for e in examples]
    assert tags[:2] == [[upos_id("INTJ"), upos_id("PUNCT")], [upos_id("VERB")]]
    assert tags[2:] == [[upos_id("NOUN")] * 2, [upos_id("NOUN")]]
    assert [list(e.heads) for e in examples[2:]] == [list(e.heads) for e in examples[:2]]
    assert len(read_examples(path, jackknife=2)[0]) == 2          # default: jackknifed only
    for flag in (["--gold-tags"], ["--jackknife", "0"]):
        r = _deptree("train-graph", "--data", str(path), "--out", str(tmp_path / "m"), *flag,
                     "--mixed-tags")
        assert r.returncode == 2 and "--mixed-tags" in r.stderr and "Traceback" not in r.stderr

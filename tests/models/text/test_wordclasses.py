"""Word classes (Brown clusters, WordNet parts of speech) and the tagger that uses them."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from models.text import wordclasses
from models.text.tagger import Tagger
from models.text.wordclasses import WordClasses


@pytest.fixture()
def small() -> WordClasses:
    """A hand-made table in spaCy's format: paths stored bit-reversed, 0 = unclustered."""
    return WordClasses.build(
        clusters={"Chicago": 0b1101, "cat": 0b1011, "dog": 0b1011 | (1 << 12), "unclustered": 0},
        lemmas={"noun": frozenset({"cat", "dog", "mail"}), "verb": frozenset({"hassle", "mail"}),
                "adj": frozenset({"big", "tall"}), "adv": frozenset()},
        irregular={"noun": frozenset(), "verb": frozenset({"ran"}), "adj": frozenset({"bigger"}),
                   "adv": frozenset()},
        rules={"noun": [("s", "")], "verb": [("s", ""), ("ed", "e"), ("ed", "")],
               "adj": [("er", "")], "adv": []},
        source="test table")


def test_cluster_prefixes_and_lowercase_fallback(small):
    cat = small.strings("cat")
    assert cat[:4] == [str(0b1011 & 15), str(0b1011 & 63), str(0b1011 & 1023), str(0b1011)]
    # "Cat" is not clustered: its lowercase is; "dog" shares cat's 4/6/10-bit prefixes only
    assert small.strings("Cat")[:4] == cat[:4]
    dog = small.strings("dog")
    assert dog[:3] == cat[:3] and dog[3] != cat[3]
    assert small.strings("zorble")[:4] == ["none"] * 4
    assert small.strings("unclustered")[:4] == ["none"] * 4 and len(small) == 3


def test_wordnet_classes_through_rules_and_exceptions(small):
    assert small.wordnet("cats") == "ns"
    assert small.wordnet("hassled") == "ved"
    assert small.wordnet("mailed") == "ved"            # "mail" + "ed"
    assert small.wordnet("mail") == "n0|v0"
    assert small.wordnet("ran") == "vx"
    assert small.wordnet("bigger") == "ax"             # "bigg" is no lemma: the exception
    assert small.wordnet("taller") == "aer"
    assert small.wordnet("e-mailed") == "ved"          # last part of a hyphenated word
    assert small.wordnet("-") == "none" and small.wordnet("") == "none"
    assert small.strings("Hassled")[4] == "ved"        # looked up lowercased


def test_save_load_round_trip(tmp_path, small):
    small.save(str(tmp_path))
    again = WordClasses.load(str(tmp_path))
    assert again == small and again != WordClasses.build({}, {}, {}, {})
    for form in ("cat", "Chicago", "hassled", "zorble", "e-mailed"):
        assert again.strings(form) == small.strings(form)


def test_load_refuses_another_format(tmp_path, small):
    import numpy as np

    small.save(str(tmp_path))
    path = tmp_path / wordclasses.FILE
    with np.load(path) as f:
        arrays = dict(f)
    meta = json.loads(str(arrays["meta"]))
    arrays["meta"] = np.array(json.dumps({**meta, "format_version": 99}))
    np.savez_compressed(path, **arrays)
    with pytest.raises(ValueError, match="format 99"):
        WordClasses.load(str(tmp_path))


def test_tagger_with_word_classes_round_trip(tmp_path, tiny_tuples, small):
    """Word classes add templates; saved once beside the forward tagger, shared by
    the backward one, and the reloaded tagger gives the same tags."""
    plain = Tagger.train(tiny_tuples, epochs=2, seed=0, n_bits=15, bidirectional=True)
    tagger = Tagger.train(tiny_tuples, epochs=2, seed=0, n_bits=15, bidirectional=True,
                          word_classes=small)
    assert len(tagger._static) > len(plain._static)
    assert tagger.backward.word_classes is small
    tagger.save(str(tmp_path), prune=0.0)
    assert os.path.exists(tmp_path / wordclasses.FILE)
    assert not os.path.exists(tmp_path / "backward" / wordclasses.FILE)
    header = json.loads((tmp_path / "tagger.json").read_text())
    assert header["word_classes"] == "test table"
    again = Tagger.load(str(tmp_path))
    assert again.word_classes == small and again.backward.word_classes is again.word_classes
    for s in tiny_tuples + [[("Zorbles", "", ""), ("hassled", "", ""), ("Chicago", "", "")]]:
        forms = [w[0] for w in s]
        assert again.tag(forms) == tagger.tag(forms)


def test_stacking_and_word_classes_are_exclusive(tiny_tuples, small):
    with pytest.raises(ValueError, match="stacked"):
        Tagger.train(tiny_tuples[:20], epochs=1, seed=0, n_bits=14, stack_folds=2,
                     word_classes=small)


def test_from_spacy_lookups_reads_the_package():
    pytest.importorskip("spacy_lookups_data")
    wc = WordClasses.from_spacy_lookups()
    assert wc.source.startswith("spacy-lookups-data ")
    assert len(wc) > 100_000 and 0 not in wc.cluster_paths
    assert "v" in wc.wordnet("hassled")[0] and wc.strings("Chicago")[3] != "none"


def test_shipped_tagger_carries_its_word_classes(shipped_dir):
    with open(f"{shipped_dir}/tagger/tagger.json", encoding="utf-8") as f:
        header = json.load(f)
    assert header["word_classes"].startswith("spacy-lookups-data ")
    tagger = Tagger.load(f"{shipped_dir}/tagger")
    assert tagger.word_classes is not None and len(tagger.word_classes) > 100_000
    wc = tagger.word_classes  # arrays of keys, not Python strings: a few MB per process
    assert sum(a.nbytes for a in [wc.cluster_keys, wc.cluster_paths, *wc.lemmas.values(),
                                  *wc.irregular.values()]) < 5e6
    # an unseen verb form is known to WordNet: tagged VERB in context
    upos, _ = tagger.tag(["They", "hassled", "me", "."])
    assert upos[1] == "VERB"


def test_cli_train_frontend_without_word_classes(tmp_path):
    """`deptree train-frontend` writes a loadable front-end; --no-word-classes needs no
    spacy-lookups-data."""
    import subprocess
    import sys

    tiny = os.path.join(os.path.dirname(__file__), "data", "tiny.conllu")
    out = tmp_path / "fe"
    r = subprocess.run([sys.executable, "-m", "deptree.cli", "train-frontend", "--data", tiny,
                        "--dev", tiny, "--out", str(out), "--epochs", "2",
                        "--no-word-classes"], capture_output=True, text=True, timeout=600,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["upos"] > 0.5
    assert json.loads((out / "metrics.json").read_text())["word_classes"] is None
    tagger = Tagger.load(str(out / "tagger"))
    assert tagger.word_classes is None and len(tagger.tag(["The", "cat", "."])[0]) == 3


def test_cli_train_frontend_names_the_missing_package(tmp_path, monkeypatch, capsys):
    """Without spacy-lookups-data the command stops with exit code 2 and says what to
    install, before training anything."""
    from deptree import cli

    def missing(cls, lang="en"):
        raise ModuleNotFoundError("word classes need the spacy-lookups-data package at "
                                  "training time: pip install -e '.[train]'")

    monkeypatch.setattr(WordClasses, "from_spacy_lookups", classmethod(missing))
    tiny = os.path.join(os.path.dirname(__file__), "data", "tiny.conllu")
    code = cli.main(["train-frontend", "--data", tiny, "--out", str(tmp_path / "fe")])
    assert code == 2
    assert "pip install -e '.[train]'" in capsys.readouterr().err
    assert not (tmp_path / "fe").exists()


def test_tables_without_clusters_still_count_as_word_classes(tmp_path, tiny_tuples):
    """Only WordNet, no clusters (len 0): the tagger still saves, names and reloads them."""
    wordnet_only = WordClasses.build({}, {"verb": ["hassle"]}, {}, {"verb": [("ed", "e")]},
                                     "wordnet only")
    assert len(wordnet_only) == 0
    tagger = Tagger.train(tiny_tuples[:20], epochs=1, seed=0, n_bits=14,
                          word_classes=wordnet_only)
    tagger.save(str(tmp_path), prune=0.0)
    again = Tagger.load(str(tmp_path))
    assert again.word_classes == wordnet_only
    assert again.tag(["They", "hassled", "me"]) == tagger.tag(["They", "hassled", "me"])


def test_sorted_unique_is_numpys_unique_of_the_keys():
    from models.text.wordclasses import sorted_unique

    keys = np.random.default_rng(0).integers(0, 2**32, 50_000, dtype=np.uint64)
    keys = np.concatenate([keys, keys[:5000]]).astype(np.uint32)       # with repeats
    for a in (keys, keys[:1], keys[:0], np.sort(keys)):
        got = sorted_unique(a)
        assert got.dtype == np.uint32 and np.array_equal(got, np.unique(a))

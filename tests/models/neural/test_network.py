"""The neural analyser: numpy inference against the JAX training graph, files, caches."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from models.conllu import read_conllu
from models.errors import ModelError
from models.neural.network import LOGP_FLOOR, NeuralAnalyser
from models.neural.vocab import Lookup, Vocab
from models.text.word_vectors import WordVectors
from tests.conftest import record_bars

jax = pytest.importorskip("jax")
from models.neural import batches as B  # noqa: E402  (needs jax)
from models.neural import jax_net as J  # noqa: E402
from models.neural import train as T  # noqa: E402

TINY = os.path.join(os.path.dirname(__file__), "..", "text", "data", "tiny.conllu")
CFG = T.NeuralConfig(word_dim=8, char_dim=4, char_filters=6, affix_dim=3, vector_dim=5, hidden=5,
                     layers=2, arc_dim=7, label_dim=3, epochs=1, batch_tokens=64)


def _words(sents):
    return [[(w.form, w.upos, w.xpos, w.feats, w.head, w.deprel) for w in s.words]
            for s in sents]


@pytest.fixture(scope="module")
def tiny():
    sents = _words(read_conllu(TINY))
    vocab = Vocab.build([[(w[0], w[1], w[2], w[3], w[5]) for w in s] for s in sents])
    forms = sorted({w[0] for s in sents for w in s})
    vectors = WordVectors.build(forms, np.random.default_rng(0).normal(size=(len(forms), 9)),
                                dims=6)
    params = J.init_params(jax.random.PRNGKey(0), vocab, CFG, vectors)
    rng = np.random.default_rng(1)     # no zero matrices: every term of the model counts
    params = {k: np.asarray(v) + rng.normal(0, 0.3, np.shape(v)).astype(np.float32)
              for k, v in params.items()}
    return sents, vocab, vectors, params


def test_numpy_inference_equals_the_jax_forward_pass(tiny):
    """Two sentences packed in one JAX batch row (the second after the first) give
    each the numpy analyser's figures for that sentence alone."""
    sents, vocab, vectors, params = tiny
    a, b = sents[0], sents[3]
    an = NeuralAnalyser(vocab, params, vectors)
    enc = B.Encoded([a, b], Lookup(vocab), vectors)
    batch = enc.arrays([[0, 1]], 64, None, 0.0)
    out = J.make_forward(vectors.table, CFG.layers, len(vocab.affixes))(
        params, B.to_device(batch), None, 1.0, 1.0)
    heads = np.asarray(batch["heads"])
    lab = np.asarray(jax.nn.log_softmax(J.label_scores(params, out["lab_head"],
                                                        out["lab_dep"], heads)))
    at = 0
    for s in (a, b):
        n = len(s)
        mine = an.analyze([w[0] for w in s])
        rows = slice(at, at + n)
        np.testing.assert_allclose(np.asarray(out["tag"])[0, rows], mine.tag_logp, atol=2e-4)
        np.testing.assert_allclose(np.asarray(out["feats"])[0, rows], mine.feats_logp,
                                   atol=2e-4)
        arc = np.asarray(out["arc"])[0, rows]                       # [n, T + 1]
        cols = [0] + list(range(at + 1, at + n + 1))                 # root, the sentence
        np.testing.assert_allclose(np.where(np.isfinite(mine.arc_logp[:, 1:].T),
                                            arc[:, cols], 0.0),
                                   np.where(np.isfinite(mine.arc_logp[:, 1:].T),
                                            mine.arc_logp[:, 1:].T, 0.0), atol=2e-4)
        assert np.all(arc[:, [c for c in range(arc.shape[1]) if c not in cols]] < -1e8)
        gold = [w[4] for w in s]
        np.testing.assert_allclose(lab[0, rows], an.label_logp(mine, gold), atol=2e-4)
        at += n


def test_the_loss_is_smoothed_over_each_words_possible_answers(tiny):
    """With label smoothing eps, a word's loss for each of its four predictions is
    (1 - eps) * -log P(gold) + eps * the mean of -log P over its possible answers: every
    class, and for the head the root and the words of its own sentence only (here two
    sentences share a row)."""
    sents, vocab, vectors, params = tiny
    enc = B.Encoded([sents[0], sents[3]], Lookup(vocab), vectors)
    batch = enc.arrays([[0, 1]], 64, None, 0.0)
    out = J.make_forward(vectors.table, CFG.layers, len(vocab.affixes))(
        params, B.to_device(batch), None, 1.0, 1.0)
    lab = np.asarray(jax.nn.log_softmax(J.label_scores(params, out["lab_head"],
                                                        out["lab_dep"], batch["heads"])))
    words = np.asarray(batch["seg"])[0] >= 0
    sizes = [len(sents[0])] * len(sents[0]) + [len(sents[3])] * len(sents[3])

    def expected(eps):
        total = 0.0
        for logp, gold, possible in (
                (np.asarray(out["tag"]), batch["tags"], None),
                (np.asarray(out["feats"]), batch["feats"], None),
                (np.asarray(out["arc"]), batch["heads"], np.array(sizes)),   # root + n - 1
                (lab, batch["labels"], None)):
            logp, gold = logp[0][words], np.asarray(gold)[0][words]
            hit = -logp[np.arange(len(gold)), gold]
            spread = (-np.where(logp > J.NO_ARC / 2, logp, 0).sum(-1)
                      / (possible if possible is not None else logp.shape[-1]))
            total += np.sum((1 - eps) * hit + eps * spread)
        return total / words.sum()

    for eps in (0.0, 0.1):
        cfg = T.NeuralConfig(**{**CFG.__dict__, "keep_input": 1.0, "keep_hidden": 1.0,
                                "word_dropout": 0.0, "label_smoothing": eps})
        opt = T.make_optimizer(cfg)
        step = T.make_step(cfg, vectors.table, len(vocab.affixes), opt, "f32")
        _, _, loss = step(params, opt.init(params), B.to_device(batch), jax.random.PRNGKey(0))
        assert float(loss) == pytest.approx(expected(eps), rel=1e-4)
    assert abs(expected(0.1) - expected(0.0)) > 1e-3     # the two cases differ


def test_save_and_load_keep_the_analysis(tiny, tmp_path):
    sents, vocab, vectors, params = tiny
    an = NeuralAnalyser(vocab, params, vectors, {"note": "x"})
    an.save(str(tmp_path))
    back = NeuralAnalyser.load(str(tmp_path))
    assert back.vocab == vocab and back.meta["note"] == "x"
    forms = [w[0] for w in sents[2]]
    np.testing.assert_allclose(back.analyze(forms).arc_logp, an.analyze(forms).arc_logp,
                               atol=0.05)      # float16 weights on disk


def test_a_missing_file_or_another_format_is_named(tiny, tmp_path):
    sents, vocab, vectors, params = tiny
    NeuralAnalyser(vocab, params, vectors).save(str(tmp_path))
    (tmp_path / "vectors.npz").unlink()
    with pytest.raises(ModelError, match="vectors.npz is missing"):
        NeuralAnalyser.load(str(tmp_path))
    header = json.loads((tmp_path / "analyser.json").read_text())
    (tmp_path / "analyser.json").write_text(json.dumps({**header, "format_version": 99}))
    with pytest.raises(ModelError, match="format 99"):
        NeuralAnalyser.load(str(tmp_path))
    with pytest.raises(ModelError, match="analyser.json is missing"):
        NeuralAnalyser.load(str(tmp_path / "nothing"))


def test_batches_and_the_cache_give_the_same_analysis(tiny):
    sents, vocab, vectors, params = tiny
    an = NeuralAnalyser(vocab, params, vectors)
    forms = [[w[0] for w in s] for s in sents[:6]]
    alone = [NeuralAnalyser(vocab, params, vectors).analyze(f) for f in forms]
    together = an.analyze_batch(forms)
    for x, y in zip(alone, together):
        np.testing.assert_allclose(x.arc_logp, y.arc_logp, atol=1e-5)
        np.testing.assert_allclose(x.tag_logp, y.tag_logp, atol=1e-5)
    assert an.analyze(forms[2]) is together[2]            # from the cache, not recomputed


def test_arc_bonus_floors_unlikely_arcs(tiny):
    sents, vocab, vectors, params = tiny
    an = NeuralAnalyser(vocab, params, vectors)
    a = an.analyze([w[0] for w in sents[0]])
    bonus = an.arc_bonus(a, 0.5)
    assert np.all(bonus >= 0.5 * LOGP_FLOOR) and np.all(bonus <= 0)
    assert np.all(bonus[:, 0] == 0) and np.all(np.diag(bonus) == 0)


def test_training_lowers_the_loss_and_resumes_from_its_checkpoint(tiny, tmp_path):
    sents = tiny[0]
    cfg = T.NeuralConfig(**{**CFG.__dict__, "epochs": 2})
    first = T.train_analyser(sents[:40], sents[40:50], cfg, checkpoint_dir=tmp_path)
    hist = first.meta["history"]
    assert len(hist) == 2 and hist[1]["loss"] < hist[0]["loss"]
    assert (tmp_path / "checkpoint-neural.npz").exists()
    cfg3 = T.NeuralConfig(**{**CFG.__dict__, "epochs": 3})
    again = T.train_analyser(sents[:40], sents[40:50], cfg3, checkpoint_dir=tmp_path)
    assert [r["epoch"] for r in again.meta["history"]] == [1, 2, 3]
    assert again.meta["history"][:2] == hist            # epochs 1-2 read, not rerun


def test_the_bar_ends_at_its_total_though_epochs_pack_differently(tiny, monkeypatch):
    """Batches pack the sentences in each epoch's order, so their count varies; the
    bar still ends full, not short of its total or past it."""
    sents, bars = tiny[0], record_bars(monkeypatch, T)
    counts, batches = [], B.Encoded.batches

    def counting(self, order, batch_tokens):
        made = batches(self, order, batch_tokens)
        counts.append(len(made))
        return made

    monkeypatch.setattr(B.Encoded, "batches", counting)
    cfg = T.NeuralConfig(**{**CFG.__dict__, "epochs": 8, "batch_tokens": 128})
    T.train_analyser(sents[:40] * 3, sents[40:50], cfg)
    assert len(set(counts)) > 1                 # the plan's count, and others
    assert len(bars) == 1 and bars[0].n == bars[0].total


def test_bfloat16_training_lowers_the_loss_and_says_so(tiny):
    sents = tiny[0]
    cfg = T.NeuralConfig(**{**CFG.__dict__, "epochs": 2, "precision": "bf16"})
    analyser = T.train_analyser(sents[:40], sents[40:50], cfg)
    hist = analyser.meta["history"]
    assert analyser.meta["precision"] == "bf16"
    assert hist[1]["loss"] < hist[0]["loss"]


def test_small_treebanks_get_many_epochs_and_long_runs_fewer_evaluations():
    sizes = (1_000, 5_012, 10_545, 20_000, 75_000, 204_577, 10**7)
    assert [T.auto_epochs(n, 2) for n in sizes] == [1200, 1198, 569, 300, 80, 30, 15]
    assert [T.auto_epochs(n) for n in sizes] == [1200, 1200, 1138, 600, 160, 59, 15]
    for epochs in (3, 100, 160, 298, 569, 600, 1198, 1200):
        checked = [e for e in range(1, epochs + 1) if T.evaluated(e, epochs)]
        assert checked[-1] == epochs and len(checked) <= T.EVALUATIONS
        assert len(checked) == epochs if epochs <= T.EVALUATIONS else len(checked) < epochs


def test_large_matrices_are_stored_as_int8_rows_within_half_a_step():
    """Both analysers of a model halve on disk (en_ewt 9.4 -> 5 MB each; dev -0.02)."""
    from models.neural.stored import QUANTIZE_MIN, SCALE, dequantize, quantize

    rng = np.random.default_rng(0)
    rows = np.linspace(0.01, 3, 300)[:, None]          # rows of very different ranges
    params = {"big": rng.normal(size=(300, 256)).astype(np.float32) * rows,
              "zero": np.zeros((QUANTIZE_MIN, 1), np.float32),
              "small": rng.normal(size=(4, 5)).astype(np.float32)}
    stored = quantize(params)
    assert stored["big"].dtype == np.int8 and stored["small"].dtype == np.float16
    assert stored["zero"].dtype == np.int8
    back = dequantize(stored)
    assert set(back) == set(params)
    step = np.abs(params["big"]).max(axis=-1, keepdims=True) / 127
    assert (np.abs(back["big"] - params["big"]) <= step / 2 + 1e-6).all()   # each row its own scale
    assert not back["zero"].any()
    with pytest.raises(ModelError, match="scales do not match"):
        dequantize({**stored, "big" + SCALE: stored["big" + SCALE][:5]})


def test_a_format_1_file_of_float16_weights_still_loads(tiny, tmp_path):
    """The models saved before int8 (format 1, every weight float16) load as they were."""
    sents, vocab, vectors, params = tiny
    an = NeuralAnalyser(vocab, params, vectors)
    an.save(str(tmp_path))
    np.savez_compressed(tmp_path / "analyser.npz",
                        **{k: np.asarray(v, np.float16) for k, v in an.params.items()})
    header = json.loads((tmp_path / "analyser.json").read_text())
    (tmp_path / "analyser.json").write_text(json.dumps({**header, "format_version": 1}))
    forms = [w[0] for w in sents[2]]
    np.testing.assert_allclose(NeuralAnalyser.load(str(tmp_path)).analyze(forms).arc_logp,
                               an.analyze(forms).arc_logp, atol=0.05)


def test_identical_vectors_are_kept_once_and_only_a_sibling_may_hold_them(tiny, tmp_path):
    """The contextual analyser is trained on the neural one's vectors: a 5.5 MB copy in
    en_ewt. `share_vectors` points it at the sibling's file; no other path is read."""
    from models.neural.stored import share_vectors

    sents, vocab, vectors, params = tiny
    an = NeuralAnalyser(vocab, params, vectors)
    an.save(str(tmp_path / "neural"))
    an.save(str(tmp_path / "contextual"))
    assert share_vectors(str(tmp_path / "contextual"), "neural")
    assert not (tmp_path / "contextual" / "vectors.npz").exists()
    assert not share_vectors(str(tmp_path / "contextual"), "neural")        # done once
    forms = [w[0] for w in sents[2]]
    back = NeuralAnalyser.load(str(tmp_path / "contextual"))
    np.testing.assert_allclose(back.analyze(forms).arc_logp, an.analyze(forms).arc_logp, atol=0.05)
    header = json.loads((tmp_path / "contextual" / "analyser.json").read_text())
    for where in ("/etc", "../../x", "../neural/../../y", 3):
        bad = json.dumps({**header, "vectors": where})
        (tmp_path / "contextual" / "analyser.json").write_text(bad)
        with pytest.raises(ModelError, match="keeps its vectors"):
            NeuralAnalyser.load(str(tmp_path / "contextual"))
    # other vectors than the sibling's stay where they are
    other = WordVectors.build(["a", "b"], np.ones((2, 9)), dims=6)
    NeuralAnalyser(vocab, {**params}, vectors).save(str(tmp_path / "c2"))
    other.save(str(tmp_path / "c2"))
    assert not share_vectors(str(tmp_path / "c2"), "neural")

"""The analyser's learning rate schedule, and training within a budget of seconds."""
from __future__ import annotations

import os

import numpy as np
import pytest

from models.conllu import read_conllu

jax = pytest.importorskip("jax")
optax = pytest.importorskip("optax")
from models.neural import train as T  # noqa: E402  (needs jax)

TINY = os.path.join(os.path.dirname(__file__), "..", "text", "data", "tiny.conllu")
CFG = T.NeuralConfig(word_dim=8, char_dim=4, char_filters=6, affix_dim=3, vector_dim=5, hidden=5,
                     layers=2, arc_dim=7, label_dim=3, epochs=5, batch_tokens=64,
                     warmup_steps=3)


def _words():
    return [[(w.form, w.upos, w.xpos, w.feats, w.head, w.deprel) for w in s.words]
            for s in read_conllu(TINY)]


def _optax_schedule(cfg: T.NeuralConfig, total: int):
    """The schedule the analyser trained with before it could be shortened."""
    return optax.join_schedules(
        [optax.linear_schedule(0.0, cfg.learning_rate, cfg.warmup_steps),
         optax.linear_schedule(cfg.learning_rate, 0.0, total - cfg.warmup_steps)],
        [cfg.warmup_steps])


def test_the_schedule_is_optax_warmup_and_decay():
    cfg = T.NeuralConfig(warmup_steps=200)
    ours, theirs = T.make_schedule(cfg, 1000), _optax_schedule(cfg, 1000)
    for step in (0, 1, 100, 199, 200, 201, 500, 999, 1000, 1200):
        assert ours(step) == pytest.approx(float(theirs(step)), rel=1e-5, abs=1e-9)


def test_rates_set_in_the_state_update_as_adam_with_the_schedule():
    """Twelve steps on a least-squares problem: the same parameters as optax's adam
    given the schedule itself."""
    cfg = T.NeuralConfig(warmup_steps=4)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(32, 5)).astype(np.float32), rng.normal(size=32).astype(np.float32)
    loss = jax.jit(jax.grad(lambda w: ((x @ w - y) ** 2).mean()))
    old = optax.chain(optax.clip_by_global_norm(5.0),
                      optax.adam(_optax_schedule(cfg, 12), b1=0.9, b2=0.9))
    new, schedule = T.make_optimizer(cfg), T.make_schedule(cfg, 12)
    w_old = w_new = np.zeros(5, np.float32)
    s_old, s_new = old.init(w_old), new.init(w_new)
    for step in range(12):
        u, s_old = old.update(loss(w_old), s_old)
        w_old = optax.apply_updates(w_old, u)
        s_new = T.with_rate(s_new, schedule(step))
        u, s_new = new.update(loss(w_new), s_new)
        w_new = optax.apply_updates(w_new, u)
    assert np.abs(np.asarray(w_old)).sum() > 0
    np.testing.assert_allclose(np.asarray(w_new), np.asarray(w_old), rtol=1e-5, atol=1e-7)


def test_a_new_plan_keeps_the_rate_and_moves_the_end():
    s = T.Schedule(peak=1.0, warmup=10, total=110)
    before = s(60)
    s.replan(60, 80)
    assert s(60) == pytest.approx(before) and s(70) == pytest.approx(before / 2)
    assert s(80) == 0.0 and s(90) == 0.0
    s.replan(70, 90)                                    # longer again, from the same rate
    assert s(70) == pytest.approx(before / 2) and s(80) == pytest.approx(before / 4)
    assert s(90) == 0.0
    w = T.Schedule(peak=1.0, warmup=10, total=110)      # replanned in the warm-up
    w.replan(5, 30)
    assert w(5) == pytest.approx(0.5) and w(10) == pytest.approx(1.0) and w(30) == 0.0


def test_affordable_epochs_from_the_epochs_so_far():
    hist = [{"seconds": 10.0, "compile_seconds": 20.0, "dev_seconds": 2.0},
            {"seconds": 10.0, "dev_seconds": 2.0}]
    assert T.affordable_epochs(hist, 50, None) == 50    # no budget
    assert T.affordable_epochs(hist, 50, 10_000) == 50  # never more than planned
    # 44 s spent, 12 s an epoch: 120 s more buys 10 more epochs
    assert T.affordable_epochs(hist, 50, 164) == 12
    slow = hist + [{"seconds": 30.0, "dev_seconds": 2.0}]
    fast = slow + [{"seconds": 1.0, "dev_seconds": 2.0}] * 9
    assert T.affordable_epochs(slow, 50, 200) == 9      # 76 s spent, 124 more at 18.7 s
    assert T.affordable_epochs(fast, 50, 200) == 28     # up again: 97 s more at 5.9 s
    assert T.affordable_epochs(hist, 50, 0) == 3        # over budget: one more to decay
    assert T.affordable_epochs([], 50, 0) == 50         # nothing measured yet
    assert T.affordable_epochs(hist, 2, 0) == 2         # done


def test_a_run_over_its_budget_stops_early_and_resumes_as_shortened(tmp_path):
    sents = _words()
    analyser = T.train_analyser(sents[:40], sents[40:50], CFG, checkpoint_dir=tmp_path,
                                seconds=0.0)
    meta = analyser.meta
    assert meta["planned_epochs"] == 5 and meta["epochs"] == 2
    assert [r["epoch"] for r in meta["history"]] == [1, 2]
    assert meta["budget_seconds"] == 0
    again = T.train_analyser(sents[:40], sents[40:50], CFG, checkpoint_dir=tmp_path,
                             seconds=0.0)
    assert again.meta["history"] == meta["history"]     # read back, not trained on to 5

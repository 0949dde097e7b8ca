"""The neural trainer's plan: its learning-rate schedule, its optimizer, and how many
epochs a budget of seconds affords."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from models.neural.jax_net import import_jax

if TYPE_CHECKING:
    from models.neural.train import NeuralConfig


@dataclass
class Schedule:
    """The learning rate of each step: a linear warm-up from 0 to `peak` over `warmup`
    steps, then a linear decay to 0 at step `total` (optax's `join_schedules` of two
    `linear_schedule`s, as the analyser trained before its plan could change).
    `replan` moves the end without a jump: the decay starts again from the rate of the
    step it is called at."""

    peak: float
    warmup: int
    total: int
    start: tuple[int, float] | None = None    # (step, rate) the decay runs from

    def __call__(self, step: int) -> float:
        if step < self.warmup:
            return self.peak * step / self.warmup
        s0, r0 = self.start or (self.warmup, self.peak)
        return max(0.0, r0 * (self.total - step) / max(1, self.total - s0))

    def replan(self, step: int, total: int) -> None:
        if step > self.warmup:
            self.start = (step, self(step))
        self.total = total


def make_schedule(cfg: NeuralConfig, total: int) -> Schedule:
    return Schedule(cfg.learning_rate, cfg.warmup_steps, total)


def make_optimizer(cfg: NeuralConfig):
    """Adam (beta2 0.9) on gradients clipped to norm 5. Its learning rate is a value
    of the optimizer's state, set before each step (`with_rate`) from a `Schedule`
    that the run may replan; a new rate costs no compiling."""
    _, jnp, optax = import_jax()
    adam = optax.inject_hyperparams(optax.adam, hyperparam_dtype=jnp.float32)(
        learning_rate=cfg.learning_rate, b1=0.9, b2=0.9)
    return optax.chain(optax.clip_by_global_norm(5.0), adam)


def with_rate(state, rate: float):
    """The optimizer state of `make_optimizer` with its learning rate set to rate."""
    _, jnp, _ = import_jax()
    state[1].hyperparams["learning_rate"] = jnp.asarray(rate, jnp.float32)
    return state


def affordable_epochs(history: Sequence[dict], planned: int, seconds: float | None) -> int:
    """The epochs a run can have in all and spend at most `seconds` on training, its
    compiling and its dev evaluations, judged by the epochs in history: the mean of the
    last ten, plus the dev evaluations' share. Never fewer than one more than done,
    never more than planned. Asked after every epoch, the answer may go up as well as
    down: a plan that could only shrink kept its cuts on slow epochs and used 92-98% of
    the budget in replays of recorded runs, against 99.7-99.9%
    (bench/journal/12-any-treebank.md, "A time budget for the build")."""
    done = len(history)
    if seconds is None or not done or done >= planned:
        return planned
    spent = sum(r["seconds"] + r.get("compile_seconds", 0) + r.get("dev_seconds", 0)
                for r in history)
    recent = history[-10:]
    per_epoch = (sum(r["seconds"] for r in recent) / len(recent)
                 + sum(r.get("dev_seconds", 0) for r in history) / done)
    more = int((seconds - spent) // max(per_epoch, 1e-3))
    return max(done + 1, min(planned, done + more))

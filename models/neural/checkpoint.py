"""The neural trainer's checkpoint: the whole training state after each epoch in one
npz, so that an interrupted run resumes where it stopped."""
from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from models.neural.jax_net import import_jax

logger = logging.getLogger(__name__)


def _leaves(tree) -> list[np.ndarray]:
    jax, _, _ = import_jax()
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def _unflatten(like, leaves: Sequence[np.ndarray]):
    jax, jnp, _ = import_jax()
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(like),
                                        [jnp.asarray(x) for x in leaves])


class Checkpoint:
    """The training state after each epoch (params, optimizer, best params, history,
    the plan of epochs) in one npz, written atomically. A checkpoint of another
    `FORMAT` (another optimizer state) is not resumed: the run starts over."""

    FORMAT = 2      # 2: the learning rate in the optimizer's state (`make_optimizer`)

    def __init__(self, directory: Path | None):
        self.path = None if directory is None else Path(directory) / "checkpoint-neural.npz"

    def save(self, epoch: int, params, opt_state, best, history: list[dict], key,
             plan: dict) -> None:
        if self.path is None:
            return
        arrays = {f"p{i}": x for i, x in enumerate(_leaves(params))}
        arrays.update({f"o{i}": x for i, x in enumerate(_leaves(opt_state))})
        arrays.update({f"b{i}": x for i, x in enumerate(_leaves(best))})
        arrays["key"] = np.asarray(key)
        arrays["meta"] = np.array(json.dumps({"format": self.FORMAT, "epoch": epoch,
                                              "history": history, "plan": plan}))
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, **arrays)
        tmp.replace(self.path)

    def load(self, params, opt_state):
        """(epoch, params, opt_state, best, history, key, plan) or None."""
        if self.path is None or not self.path.exists():
            return None
        d = np.load(self.path)
        meta = json.loads(str(d["meta"]))
        if meta.get("format", 1) != self.FORMAT:
            logger.warning("%s is from another version of the trainer: the neural analyser "
                           "starts over", self.path)
            return None

        def group(prefix, like):
            n = len(_leaves(like))
            return _unflatten(like, [d[f"{prefix}{i}"] for i in range(n)])

        logger.info("resuming the neural analyser after epoch %d", meta["epoch"])
        return (meta["epoch"], group("p", params), group("o", opt_state), group("b", params),
                meta["history"], d["key"], meta.get("plan", {}))

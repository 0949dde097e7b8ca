"""Per-epoch checkpoints of the graph parser's online training (`train`): the
weights, their averaging accumulator, the step and the epoch, and a tensor
component's matrices, so an interrupted run resumes after its last finished epoch."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from .tensor_online import TensorState

logger = logging.getLogger(__name__)


class Checkpoint:
    def __init__(self, directory: Path, stage: str):
        self.path = directory / f"checkpoint-{stage}.npz"

    def resume(self, size: int, tensor: TensorState | None = None):
        """(w, u, step, first epoch to run): from the checkpoint, or fresh; a tensor's
        matrices are restored in place."""
        if not self.path.exists():
            return np.zeros(size, dtype=np.float32), np.zeros(size, dtype=np.float64), 1.0, 0
        d = np.load(self.path)
        logger.info("resuming %s after epoch %d", self.path.name, int(d["epoch"]))
        if tensor is not None:
            tensor.restore(d)
        return d["w"], d["u"], float(d["step"]), int(d["epoch"]) + 1

    def save(self, w, u, step, epoch, tensor: TensorState | None = None):
        tmp = self.path.with_suffix(".tmp.npz")
        extra = {} if tensor is None else {f"tensor_{k}": v for k, v in tensor.arrays.items()}
        np.savez(tmp, w=w, u=u, step=step, epoch=epoch, **extra)
        tmp.replace(self.path)

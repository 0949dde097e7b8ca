"""A trained transition model: labels, actions, feature templates and weights.

On disk (a directory): `model.json`, a self-describing header (format version,
transition system, labels, actions, templates, hash-table size, training command
and data hash, decoder defaults), and `weights.npz`, the non-zero weights as gaps between
their sorted flat indices (uint32) and float16 values, compressed. No pickle.
A loaded model keeps them compact (`classifier.compact`: row map, dense rows, packed
pairs; en_ewt 56 MB instead of a 444 MB dense table); training uses a dense W.

Serving API (what `worker/` imports): `load(directory)` and
`decode(model, forms, lemmas, upos, xpos, budget, arc_p, power) -> (heads, deprels,
score, stats)`.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..decoders import DEADLINE, DecoderSpec, Field, deadline_of
from ..errors import Errors, ModelError
from ..graph.encode import encode
from ..npz import check_npz, read_npz, save_npz
from .classifier import compact, flat_weights, identity_weights
from .decode import Scratch, parse
from .features import parse_templates

logger = logging.getLogger(__name__)

FORMAT = "deptree-transition"
VERSION = 1
SYSTEM = "choi-mccallum-2013-hybrid"

BEAM_DEFAULT = 16        # bench/RESULTS.md (selectional section): +1.6 UAS over b=1
MARGIN_DEFAULT = 0.88    # the paper's m (Section 4.2)


@dataclass
class TransitionModel:
    labels: list[str]
    atype: np.ndarray        # int64 (A,)
    alabel: np.ndarray       # int64 (A,), -1 for NO-* moves
    templates: list[str]
    W: np.ndarray | None     # float32 (n_rows, A) dense (training); None once loaded
    meta: dict[str, Any] = field(default_factory=dict)
    # (row_of, Wc, sp), see `classifier`: what decoding reads.
    # A loaded model holds only these (en_ewt 56 MB instead of a 444 MB dense W);
    # with a dense W they are its identity map (and follow in-place updates of W).
    weights: tuple | None = None

    def __post_init__(self) -> None:
        if self.weights is None:
            if self.W is None:
                raise ValueError("TransitionModel needs W or compact weights")
            self.weights = identity_weights(self.W)
        self.table = parse_templates(self.templates)
        self.root_label = self.labels.index("root")
        self.fallback_label = self.labels.index("dep") if "dep" in self.labels else 0

    @property
    def n_rows(self) -> int:
        return self.weights[0].shape[0]

    def dense_weights(self) -> np.ndarray:
        """The dense float32 (n_rows, A) table (built from the compact weights of a
        loaded model: 444 MB for en_ewt, for training and tests only)."""
        if self.W is not None:
            return self.W
        flat, vals = flat_weights(*self.weights)
        W = np.zeros(self.n_rows * len(self.atype), np.float32)
        W[flat] = vals
        return W.reshape(self.n_rows, len(self.atype))

    def nbytes(self) -> int:
        """Bytes held by the model's weight arrays."""
        arrays = list(self.weights) + ([self.W] if self.W is not None else [])
        seen, total = set(), 0
        for a in arrays:
            if id(a) not in seen:
                seen.add(id(a))
                total += a.nbytes
        return total

    def parse_encoded(self, attrs: np.ndarray, beam: int = 1, margin: float = MARGIN_DEFAULT,
                      scratch: Scratch | None = None, deadline: float | None = None,
                      arc_p: np.ndarray | None = None, power: float = 0.0):
        return parse(attrs, self.table, self.weights, self.atype, self.alabel, self.root_label,
                     self.fallback_label, beam, margin, scratch, deadline, arc_p, power)

    # ---- files ---------------------------------------------------------------------
    def save(self, directory: str | Path, prune: float = 0.0) -> None:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        if self.W is not None:
            flat = self.W.ravel()
            idx = np.flatnonzero(np.abs(flat) > prune).astype(np.uint32)
            value = flat[idx]
        else:
            nz, vals = flat_weights(*self.weights)
            keep = np.abs(vals) > prune
            idx, value = nz[keep].astype(np.uint32), vals[keep]
        # sorted flat indices stored as gaps: small numbers, which compress far better
        gaps = np.diff(idx, prepend=np.uint32(0)).astype(np.uint32)
        save_npz(d / "weights.npz", gaps=gaps, value=value.astype(np.float16))
        header = {
            "format": FORMAT, "version": VERSION, "system": SYSTEM,
            "labels": self.labels, "actions": [[int(t), int(la)] for t, la in
                                               zip(self.atype, self.alabel)],
            "templates": list(self.templates), "n_rows": int(self.n_rows),
            "weights": {"stored": int(idx.size), "pruned_below": prune, "dtype": "float16",
                        "index": "gaps of sorted flat indices into (n_rows, n_actions)"},
            "decoder_defaults": {"beam": BEAM_DEFAULT, "margin": MARGIN_DEFAULT},
            **self.meta,
        }
        (d / "model.json").write_text(json.dumps(header, indent=1) + "\n")

    @classmethod
    def load(cls, directory: str | Path) -> TransitionModel:
        d = Path(directory)
        try:
            header = json.loads((d / "model.json").read_text())
            if header.get("format") != FORMAT or header.get("version") != VERSION:
                raise ValueError(f"format {header.get('format')!r} version "
                                 f"{header.get('version')!r}, expected {FORMAT!r} {VERSION}")
            actions = np.array(header["actions"], dtype=np.int64).reshape(-1, 2)
            n_rows, n_actions = int(header["n_rows"]), len(actions)
            # as many weights as save wrote, at most one per cell of the table: checked
            # on the arrays' headers, before their data is read (models/npz.py)
            stored = (header.get("weights") or {}).get("stored", n_rows * n_actions)
            if not 0 <= int(stored) <= n_rows * n_actions:
                raise ValueError(f"model.json says {stored} weights are stored, the table "
                                 f"has {n_rows} x {n_actions} cells")
            shapes = check_npz(d / "weights.npz")
            for name in ("gaps", "value"):
                shape = shapes.get(name, ((),))[0]
                if len(shape) != 1 or shape[0] > int(stored):
                    raise ValueError(f"weights.npz: {name} has shape {shape}, expected at "
                                     f"most ({stored},)")
            z = read_npz(d / "weights.npz")
            gaps, val = z["gaps"], z["value"]
            del z
            # gaps are uint32 and the flat indices < 2^32 (save writes them as uint32)
            if gaps.ndim != 1 or gaps.shape != val.shape:
                raise ValueError("weights.npz: gaps and value differ in shape")
            if int(gaps.sum(dtype=np.uint64)) >= n_rows * n_actions or \
                    (gaps.size > 1 and not gaps[1:].all()):
                raise ValueError("weight indices not increasing within the table")
            weights = compact(gaps, val.astype(np.float16, copy=False), n_rows, n_actions)
            del gaps, val
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelError(Errors.E050.format(path=d, reason=exc)) from exc
        meta = {k: v for k, v in header.items()
                if k not in ("labels", "actions", "templates", "n_rows", "weights")}
        return cls(list(header["labels"]), actions[:, 0].copy(), actions[:, 1].copy(),
                   list(header["templates"]), None, meta, weights)


def load(directory: str | Path) -> TransitionModel:
    """Load a transition model directory. Its parsing kernels compile on first use
    (a worker warms them before it takes requests: `worker/warmup.py`), not here, so
    that loading a pipeline compiles nothing a process may not need."""
    return TransitionModel.load(directory)


def _decode(model: TransitionModel, b: dict, forms: Sequence[str],
            lemmas: Sequence[str] | None, upos: Sequence[str], xpos: Sequence[str],
            arc_p: np.ndarray | None = None, power: float = 0.0):
    if not forms:
        return [], [], 0.0, {"transitions": 0, "branches": 0, "seconds": 0.0}
    t0 = time.perf_counter()
    enc = encode(forms, lemmas, upos, xpos)
    heads, labs, score, stats = model.parse_encoded(enc.attrs, b["beam"], b["margin"],
                                                    deadline=deadline_of(b), arc_p=arc_p,
                                                    power=power)
    stats["seconds"] = time.perf_counter() - t0
    stats["beam"], stats["margin"] = b["beam"], b["margin"]
    return ([int(h) for h in heads[1:]], [model.labels[int(la)] for la in labs[1:]],
            score, stats)


SPEC = DecoderSpec(
    "selectional", "transition parser with selectional branching (Choi & McCallum 2013)",
    (Field("beam", "int", BEAM_DEFAULT, "most transition sequences explored", lo=1, hi=1024,
           cap=64),
     Field("margin", "number", MARGIN_DEFAULT, "branch where the best two moves' scores "
           "differ by less than this", lo=0, hi=1),
     DEADLINE),
    _decode, component="transition")


def decode(model: TransitionModel, forms: Sequence[str], lemmas: Sequence[str] | None,
           upos: Sequence[str], xpos: Sequence[str], budget: dict | None = None,
           arc_p: np.ndarray | None = None, power: float = 0.0):
    """Parse one sentence: (heads list [h1..hn], deprels list, score, stats); with the
    neural analyser's arc probabilities `arc_p` weighed into every move to `power`
    (`decode.with_arc_probs`)."""
    return SPEC(model, budget, forms, lemmas, upos, xpos, arc_p=arc_p, power=power)

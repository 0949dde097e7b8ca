"""Several neural analysers of one treebank, their probabilities averaged.

Analysers trained alike from other seeds make different errors, and on a small
treebank the seed alone moves dev LAS by up to a point; the mean of their
probabilities (tags, FEATS, heads, relations) beats each member. `deptree train
--analysers N` writes member 1 in `neural/` as a single analyser is written, and
members 2..N in `neural/member-2/`, ... beside its files. `first(k)` is the
ensemble of the first k members, which a request may choose for speed (the budget
field `analysers`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from models.errors import ModelError
from models.neural.network import Analysis, NeuralAnalyser

MEMBER = "member-"              # prefix of the extra members' subdirectories


def log_mean_exp(logps: Sequence[np.ndarray]) -> np.ndarray:
    """float32 log of the mean of exp(logps) elementwise; -inf where all are -inf."""
    if len(logps) == 1:
        return logps[0]
    x = np.stack(logps).astype(np.float64)
    top = np.max(x, axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = safe + np.log(np.mean(np.exp(x - safe), axis=0))
    return np.where(np.isfinite(top), out, -np.inf).astype(np.float32)


@dataclass
class EnsembleAnalysis(Analysis):
    """The members' mean tag, FEATS and arc log-probabilities, and each member's own
    analysis for its relation scores (`lab_head`, `lab_dep` are None)."""

    members: list[Analysis] = field(default_factory=list)


class AnalyserEnsemble:
    """`NeuralAnalyser`'s interface (`analyze`, `analyze_batch`, `label_logp`,
    `arc_bonus`, `arc_probs`, `vocab`, `labels`) over members that share their vocabulary."""

    def __init__(self, members: Sequence[NeuralAnalyser], *, checked: bool = False):
        if not members:
            raise ValueError("an ensemble needs at least one analyser")
        first = members[0].vocab
        for m in members[1:] if not checked else ():
            if m.vocab.to_json() != first.to_json():
                raise ModelError("the analysers of an ensemble were trained with other "
                                 "vocabularies (another training file?)")
        self.members = list(members)
        self.vocab = first
        self.meta = {"members": [m.meta for m in self.members]}
        self._first: dict[int, NeuralAnalyser | AnalyserEnsemble] = {len(members): self}

    labels = property(lambda self: self.vocab.labels)
    arc_bonus = staticmethod(NeuralAnalyser.arc_bonus)
    arc_probs = staticmethod(NeuralAnalyser.arc_probs)

    def first(self, k: int) -> NeuralAnalyser | AnalyserEnsemble:
        """The first k members (1 <= k <= their number), the first alone for k = 1.
        They are the same objects, so their caches of recent analyses are shared."""
        if not 1 <= k <= len(self.members):
            raise ValueError(f"an ensemble of {len(self.members)} analysers has no first {k}")
        if k not in self._first:
            self._first[k] = (self.members[0] if k == 1 else
                              AnalyserEnsemble(self.members[:k], checked=True))
        return self._first[k]

    def held(self, sentences: Sequence[Sequence[str]]) -> list[bool]:
        """Whether every member holds each sentence's analysis already."""
        return [all(x) for x in zip(*(m.held(sentences) for m in self.members))]

    def analyze_batch(self, sentences: Sequence[Sequence[str]]) -> list[EnsembleAnalysis]:
        per_member = [m.analyze_batch(sentences) for m in self.members]
        return [EnsembleAnalysis(log_mean_exp([a.tag_logp for a in group]),
                                 log_mean_exp([a.feats_logp for a in group]),
                                 log_mean_exp([a.arc_logp for a in group]),
                                 None, None, list(group))
                for group in zip(*per_member)]

    def analyze(self, forms: Sequence[str]) -> EnsembleAnalysis:
        return self.analyze_batch([forms])[0]

    def label_logp(self, a: EnsembleAnalysis, heads: Sequence[int] | np.ndarray
                   ) -> np.ndarray:
        """float32 [n, labels]: log of the members' mean P(relation | arc)."""
        return log_mean_exp([m.label_logp(x, heads) for m, x in zip(self.members, a.members)])


def analyser_count(analyser: object | None) -> int:
    """How many analysers `analyser` averages: 0 for None, 1 for a `NeuralAnalyser`."""
    if analyser is None:
        return 0
    return len(analyser.members) if isinstance(analyser, AnalyserEnsemble) else 1


def member_dirs(directory: str | Path) -> list[Path]:
    """The analysers under a model's `neural/`: itself, then member-2, member-3, ..."""
    root = Path(directory)
    extra = sorted((p for p in root.glob(MEMBER + "*")
                    if p.is_dir() and p.name[len(MEMBER):].isdigit()),
                   key=lambda p: int(p.name[len(MEMBER):]))
    return [root, *extra]


def load_analyser(directory: str | Path) -> NeuralAnalyser | AnalyserEnsemble:
    """The analyser in directory, or the ensemble of it and its members."""
    members = [NeuralAnalyser.load(str(d)) for d in member_dirs(directory)]
    return members[0] if len(members) == 1 else AnalyserEnsemble(members)

"""The accurate tagger: the linear tagger's scores plus the neural analyser's.

The analyser's tag log-probabilities, divided by `weight`, are added to the linear
tagger's scores (`text/tagger.py`), over the same (UPOS, XPOS) classes: the linear
tagger is sharp on frequent words, the analyser sees the whole sentence and the
characters of rare ones. `deptree train` chooses the weight on the development set.
The analyser caches its analyses, so the parser's arc and relation scores reuse the
one it ran for the tags.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.neural.network import NeuralAnalyser
from models.text.tagger import ClassTagger, Tagger


class AnalyserTagger(ClassTagger):
    """The `ClassTagger` interface (`tag`, `tag_classes`, `alternatives`) on the
    linear tagger's scale, so that `Pipeline.choose_tags` keeps its settings."""

    def __init__(self, linear: Tagger, analyser: NeuralAnalyser, weight: float):
        if [tuple(c) for c in linear.classes] != [tuple(c) for c in analyser.vocab.classes]:
            raise ValueError("the neural analyser was trained for other tag classes than "
                             "the linear tagger's")
        self.linear, self.analyser, self.weight = linear, analyser, float(weight)
        self.classes = linear.classes

    def scores(self, forms: Sequence[str]) -> np.ndarray:
        """float32 [T, classes]."""
        forms = list(forms)
        return self.linear.scores(forms) + self.analyser.analyze(forms).tag_logp / self.weight

    def tag_classes(self, forms: Sequence[str]) -> np.ndarray:
        if not len(forms):
            return np.empty(0, np.int64)
        return np.argmax(self.scores(forms), axis=1)

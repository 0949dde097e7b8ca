"""deptree from Python: dependency trees inside a program.

    import deptree

    nlp = deptree.load("en_ewt")                  # a model in this process
    for sent in nlp.parse("The cat sat on the mat. It was happy."):
        print([(w.form, w.head, w.deprel) for w in sent.words])
    nlp.parse(tokens=[["The", "cat", "sat", "."]], decoder="mst", confidence=True)

    svc = deptree.Client("http://localhost:8000")  # the same calls over the service
    svc.parse("The cat sat.", decoder="greedy", restarts=50)

Both return `Sentence` values (words with heads, relations, tags, lemmas, FEATS and,
when asked, per-arc confidence; `to_conllu()`), and raise `ParseError` on a refusal.
`load` imports the parsers only when it is called: `deptree.Client` alone is light.
"""
from __future__ import annotations

from .client import Client
from .errors import ParseError
from .sentence import MultiwordToken, Sentence, Word, to_conllu


def load(model="en_ewt", *, model_dirs=()):
    """A model by name or directory, loaded in this process (`deptree.parser.load`)."""
    from .parser import load as _load

    return _load(model, model_dirs=model_dirs)


__all__ = ["Client", "MultiwordToken", "ParseError", "Sentence", "Word", "load", "to_conllu"]

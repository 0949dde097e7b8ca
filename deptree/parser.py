"""A model in this process: `deptree.load(name)` and its `parse(...)`.

The parser runs each call as one job of the worker's engine (`worker.engine.Engine`),
as the service's workers do: the same tagging, look-ahead analysis, limits and budget
checks, so a tree from here is the tree the service would give for the same request.
What the service adds (queues, caches, deadlines capped by its settings, many workers)
is not here: the budget is bounded only by each decoder's own range.
"""
from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worker.config import WorkerConfig

from .errors import ParseError
from .inputs import read_inputs
from .sentence import Sentence

DEFAULT_DECODER = "greedy"       # as the service's `default_decoder`
DEFAULT_TAGGER = "auto"          # the most accurate tagger the model has


class Parser:
    """A loaded model. `decoders` names each decoder with its budget fields, `taggers`
    the taggers the model has (the last is the most accurate)."""

    def __init__(self, engine: Any, name: str) -> None:
        self._engine = engine
        self._pipe = engine.pipes[name]
        self.name = name

    version = property(lambda self: self._pipe.version)
    language = property(lambda self: self._pipe.language)
    taggers = property(lambda self: list(self._pipe.taggers))
    labels = property(lambda self: list(self._pipe.labels))

    @property
    def decoders(self) -> dict[str, dict[str, Any]]:
        return self._pipe.decoders()

    def parse(self, text: str | None = None, *, tokens: Sequence[Sequence[str]] | None = None,
              conllu: str | None = None, decoder: str = DEFAULT_DECODER,
              tagger: str = DEFAULT_TAGGER, **budget: Any) -> list[Sentence]:
        """Trees of raw `text` (tokenized and split into sentences by the model), of
        `tokens` (one list of token strings a sentence) or of `conllu` (its words),
        tagged by `tagger` and parsed by `decoder` with the budget fields given as
        keywords (`restarts=50`, `deadline_ms=200`, `confidence=True`, ...: see
        `decoders`). ParseError when the request is refused."""
        kind, data = read_inputs(text, tokens, conllu)
        items = [{"kind": "document", "text": data}] if kind == "text" else \
            [{"kind": "tokens", "forms": forms} for forms in data]
        job = {"id": uuid.uuid4().hex, "model": self.name, "decoder": decoder,
               "tagger": self._pipe.tagging.resolve(tagger), "budget": budget,
               "deadline_at": None, "expires_at": None, "items": items}
        reply = self._engine.run(job)
        if not reply.get("ok"):
            err = reply.get("error") or {}
            raise ParseError(err.get("code", "internal_error"), err.get("message", ""),
                             limit=err.get("limit"), value=err.get("value"))
        out = []
        for trees in reply["results"]:
            for tree in trees:
                sent = Sentence.from_dict(tree)
                if kind == "text" and sent.words and sent.words[0].start is not None:
                    sent = Sentence(sent.words, sent.multiword, sent.score, sent.stats,
                                    data[sent.words[0].start:sent.words[-1].end])
                out.append(sent)
        return out

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> Parser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load(model: str | Path = "en_ewt", *, model_dirs: Sequence[str | Path] = ()) -> Parser:
    """The model named `model` (a shipped model, one in `model_dirs`) or in the
    directory `model`, loaded in this process. Its decoders compile on first use, from
    numba's cache when it has them (a few seconds each otherwise)."""
    from worker.engine import Engine  # the parsers' imports: only when a model loads

    engine = Engine(WorkerConfig(models=[str(model)], model_dirs=[str(d) for d in model_dirs],
                                 warm_up=False))
    engine.load()
    (name,) = engine.pipes
    return Parser(engine, name)

"""The job and reply shapes passed between the gateway and workers, as plain dicts.

A job (JSON-serialisable, so it travels over a pipe or a Redis stream):

    {"id": "hex", "model": "en_ewt", "version": "1+...",   # the version it was planned for
     "decoder": "greedy", "budget": {...},
     "checked": True,           # the gateway completed `budget` (every field) and checked
                                # it against the catalogue: the worker takes it as it is;
                                # absent: the worker checks it (`Pipeline.budget`)
     "tagger": "fast" | "accurate" | None,    # tags sentence, document and tokens items;
                                              # absent or None (older gateways): "fast"
     "deadline_at": unix time or None, "expires_at": unix time or None,
     "limits": {"max_tokens_per_sentence": 250, "max_sentences": 256},
     "items": [{"kind": "sentence", "text": "..."},          # raw text, one sentence
               {"kind": "document", "text": "..."},          # raw text, split here
               {"kind": "tokens", "forms": [...]},           # pre-tokenized, tagged here
               {"kind": "tagged", "forms": [...], "upos": [...], "xpos": [...],
                "lemmas": [...]}]}                           # tags kept

A reply is {"id", "ok": True, "results": [[tree, ...] per item], "version": the
version of the model that made them (the worker's, whatever the job's), "worker": {...}}
or {"id", "ok": False, "error": {"kind", "code", "message", "limit", "value", "got"},
"worker": {...}}. A tree is {"tokens": [{id, form, lemma, upos, xpos, head, deprel,
feats, start?, end?, space_after?}], "multiword": [{first, last, form, start, end}],
"score", "stats"} (start, end, space_after and multiword tokens from raw text only).
Error kinds: "limit" (a size limit, HTTP 413),
"input" / "budget" / "model" (a bad value, 422), "internal" (a bug, 500),
"crashed" (the worker died on the job, 503).
"""
from __future__ import annotations

import logging
import math
import os
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from models.decoders import BudgetError
from models.errors import DeptreeError, ModelError

if TYPE_CHECKING:
    from models.serve.pipeline import ParsedTree

logger = logging.getLogger(__name__)


class JobError(DeptreeError):
    """A request the worker refuses; `kind` says which HTTP family it belongs to."""

    kind = "input"

    def __init__(self, code: str, message: str, *, limit: str | None = None,
                 value: Any = None, got: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.limit = limit
        self.value = value
        self.got = got


class LimitError(JobError):
    """A size limit exceeded (sentences, tokens, characters, body)."""

    kind = "limit"


def error_payload(exc: BaseException) -> dict[str, Any]:
    """The reply's `error` for an exception raised while running a job."""
    if isinstance(exc, JobError):
        return {"kind": exc.kind, "code": exc.code, "message": exc.message,
                "limit": exc.limit, "value": exc.value, "got": exc.got}
    if isinstance(exc, BudgetError):
        return {"kind": "budget", "code": exc.code, "message": exc.message,
                "limit": exc.limit, "value": exc.value, "got": exc.got}
    if isinstance(exc, ModelError):
        return {"kind": "model", "code": "model_error", "message": str(exc)}
    if isinstance(exc, DeptreeError):
        return {"kind": "input", "code": "invalid_input", "message": str(exc)}
    return {"kind": "internal", "code": "internal_error",
            "message": f"{type(exc).__name__}: {exc}"}


def rss_bytes() -> int:
    """Resident set size of this process (Linux /proc; 0 where unavailable)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def tree_dict(tree: ParsedTree) -> dict[str, Any]:
    """A parsed tree as the reply's JSON tree (the shape in this module's docstring)."""
    toks = []
    for t in tree.tokens:
        d = {"id": int(t.id), "form": t.form, "lemma": t.lemma, "upos": t.upos, "xpos": t.xpos,
             "head": int(t.head), "deprel": t.deprel, "feats": getattr(t, "feats", "_") or "_"}
        if t.start is not None:
            d["start"], d["end"] = int(t.start), int(t.end)
        if t.space_after is not None:
            d["space_after"] = bool(t.space_after)
        toks.append(d)
    return {"tokens": toks, "multiword": [asdict(m) for m in tree.multiword],
            "score": jsonable(float(tree.score)), "stats": jsonable(tree.stats)}


def jsonable(v: Any) -> Any:
    """Decoder stats as plain JSON values (numpy scalars and arrays included)."""
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if hasattr(v, "tolist"):            # numpy scalar or array
        return jsonable(v.tolist())
    if isinstance(v, float) and not math.isfinite(v):
        return None                     # JSON has no inf/nan (e.g. a -inf tree score)
    return v

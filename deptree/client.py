"""The same calls over a running deptree service: `deptree.Client(url).parse(...)`.

It posts to `/parse` and builds the same `Sentence` values as a model loaded in this
process (`deptree.load`), so a program can move between the two. The standard
library's HTTP client carries it: the client needs nothing that the parsers need.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from .errors import ParseError
from .inputs import read_inputs
from .sentence import Sentence


class Client:
    """A deptree service at `url` (e.g. "http://localhost:8000"). `model` is the model
    a request asks for when it names none (None: the service's default)."""

    def __init__(self, url: str, *, model: str | None = None, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.model = model
        self.timeout = timeout

    def parse(self, text: str | None = None, *, tokens: Sequence[Sequence[str]] | None = None,
              conllu: str | None = None, decoder: str | None = None,
              tagger: str | None = None, model: str | None = None,
              **budget: Any) -> list[Sentence]:
        """As `Parser.parse`; `decoder`, `tagger` and `model` left out take the
        service's defaults. ParseError when the service refuses the request or does
        not answer it (with its HTTP `status`, `code` and, for a 503, `retry_after`)."""
        kind, data = read_inputs(text, tokens, conllu)
        body: dict[str, Any] = {"text": data} if kind == "text" else {"sentences": data}
        for key, value in (("model", model or self.model), ("decoder", decoder),
                           ("tagger", tagger)):
            if value is not None:
                body[key] = value
        body.update(budget)
        answer = self._call("POST", "/parse", body)
        return [Sentence.from_dict(s) for s in answer["sentences"]]

    def models(self) -> dict[str, dict[str, Any]]:
        """GET /models: each model with its decoders, their budget fields, and taggers."""
        return self._call("GET", "/models")["models"]

    def ready(self) -> dict[str, Any]:
        """GET /ready (ParseError with status 503 while the service is not ready)."""
        return self._call("GET", "/ready")

    def _call(self, method: str, path: str, body: dict | None = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise _refusal(exc) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ParseError("unreachable", f"no answer from {self.url}: {reason}") from None


def _refusal(exc: urllib.error.HTTPError) -> ParseError:
    """The ParseError of an HTTP error answer (the service's error body where it has one)."""
    try:
        err = json.loads(exc.read()).get("error") or {}
    except (ValueError, AttributeError):
        err = {}
    retry = exc.headers.get("Retry-After") if exc.headers else None
    return ParseError(err.get("code", f"http_{exc.code}"), err.get("message", str(exc)),
                      status=exc.code, limit=err.get("limit"), value=err.get("value"),
                      retry_after=int(retry) if retry and retry.isdigit() else None)

"""A decoder described once by a `DecoderSpec`: its budget fields (type, default, bounds
or choices, a one-line doc) and its decode function; a request's budget checked once
into a `Budget`.

`DecoderSpec.budget` is the one check of a budget: it completes it with the defaults,
validates every field it sets (with a server's caps) and returns the typed, read-only
`Budget` that everything below takes as it is. A request is checked once, where it
enters: the gateway checks it against the spec the workers' catalogue describes
(`describe` / `from_description`), with the server's caps, and its job says so, so the
worker takes it as it is; a job from anywhere else (the Python API, `deptree parse`) is
checked at the worker's entry (`parse_policy.check_budget`). A field's `cap` is its
serving ceiling below its bounds (a server may change it: `budget_caps`, keyed by field
name). Every decoder is listed in one place, `models/decoder_registry.py`.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from numbers import Integral, Real
from typing import Any

from .errors import DeptreeError

KINDS = ("int", "number", "choice", "bool", "any")   # "any": a field of an older worker


class BudgetError(DeptreeError):
    """A budget the decoder refuses; `code` as the HTTP error catalogue names it."""

    def __init__(self, message: str, code: str = "invalid_budget", *, limit: str | None = None,
                 value: Any = None, got: Any = None) -> None:
        super().__init__(message)
        self.code, self.message = code, message
        self.limit, self.value, self.got = limit, value, got


@dataclass(frozen=True)
class Field:
    """One budget field. Numbers lie in [lo, hi] ((lo, hi] with `lo_open`); None is a
    value only when `nullable`; `cap` is the ceiling a server applies by default (the
    library itself stops at `hi`: a benchmark may ask for more than a server allows)."""

    name: str
    kind: str
    default: Any
    doc: str
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    choices: tuple[str, ...] = ()
    nullable: bool = False
    cap: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"budget field {self.name}: kind {self.kind!r} not in {KINDS}")

    def check(self, v: Any, cap: float | None = None) -> Any:
        """`v` as this field's type, or BudgetError naming the field, `v` and the bound;
        `cap` (a server's ceiling, see `DecoderSpec.caps`) bounds numbers from above."""
        if v is None and self.nullable:
            return None
        if isinstance(v, (list, tuple, dict)):
            want = self.domain(cap) if self.kind in ("int", "number") else "a single value"
            raise BudgetError(f"{self.name} must be {want}, got {type(v).__name__}",
                              "wrong_type", value=self.name)
        if self.kind == "bool":
            if not isinstance(v, bool):
                raise BudgetError(f"{self.name} must be true or false, got {v!r}")
            return v
        if self.kind == "choice":
            if v not in self.choices:
                raise BudgetError(f"{self.name} must be one of {', '.join(self.choices)}, "
                                  f"got {v!r}")
            return v
        if self.kind == "any":
            return v
        if isinstance(v, bool) or not isinstance(v, Integral if self.kind == "int" else Real):
            raise BudgetError(f"{self.name} must be {self.domain(cap)}, got {v!r}")
        if self.kind == "number":
            try:
                v = float(v)                        # an int may exceed every float
            except OverflowError:
                raise BudgetError(f"{self.name} must be {self.domain(cap)}, got an integer "
                                  f"of {len(str(v))} digits") from None
            if not math.isfinite(v):
                raise BudgetError(f"{self.name} must be finite, got {v!r}")
        if cap is not None and v > cap:
            raise BudgetError(f"{self.name}={v} exceeds budget_caps.{self.name}={cap:g}",
                              "budget_limit", limit=f"budget_caps.{self.name}", value=cap,
                              got=v)
        if not self.inside(v):
            raise BudgetError(f"{self.name} must be {self.domain(cap)}, got {v!r}")
        return int(v) if self.kind == "int" else v

    def inside(self, v: float) -> bool:
        if self.lo is not None and (v <= self.lo if self.lo_open else v < self.lo):
            return False
        return self.hi is None or v <= self.hi

    def domain(self, cap: float | None = None) -> str:
        """"an integer in [1, 10000]", "a positive number", ...; with a server's `cap`
        the range it allows ("an integer in [1, 2000]"), the bound in force."""
        what = "an integer" if self.kind == "int" else "a number"
        top = self.hi if cap is None else cap if self.hi is None else min(self.hi, cap)
        if self.lo == 0 and self.lo_open and top is None:
            return f"a positive {what.split()[-1]}"
        if self.lo is None and top is None:
            return what
        lo = "-inf" if self.lo is None else f"{self.lo:g}"
        hi = "inf" if top is None else f"{top:g}"
        return f"{what} in {'(' if self.lo_open else '['}{lo}, {hi}]"

    def describe(self) -> dict[str, Any]:
        """JSON for the catalogue (`from_description` reads it back)."""
        out = {"kind": self.kind, "default": self.default, "doc": self.doc}
        for key in ("lo", "hi", "cap"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.lo_open:
            out["lo_open"] = True
        if self.choices:
            out["choices"] = list(self.choices)
        if self.nullable:
            out["nullable"] = True
        return out


# shared by every decoder: the one home of the deadline's check
DEADLINE = Field("deadline_ms", "number", None, "stop searching after this many "
                 "milliseconds and answer the best tree so far", lo=0, lo_open=True,
                 nullable=True, cap=10000)


def deadline_of(budget: Mapping[str, Any]) -> float | None:
    """time.monotonic() at which `deadline_ms` of the budget runs out (None: none); a
    plain mapping's deadline is checked, a `Budget`'s was."""
    ms = budget.get(DEADLINE.name)
    if not isinstance(budget, Budget):
        ms = DEADLINE.check(ms)
    return None if ms is None else time.monotonic() + ms / 1000.0


def remaining_budget(deadline: float | None) -> dict[str, float]:
    """The budget of a stage that must end by `deadline` (time.monotonic(); None: no
    deadline): what is left of it as `deadline_ms`, at least a microsecond, so a late
    stage takes its least step. How one deadline covers tagging, a partner decoder and
    the main decoder of one sentence."""
    if deadline is None:
        return {}
    return {DEADLINE.name: max(1e-3, (deadline - time.monotonic()) * 1000.0)}


class Budget(Mapping[str, Any]):
    """A decoder's budget as `DecoderSpec.budget` checked it: the spec and a value for
    each of its fields (the deadline only when set). Read-only; `replace` gives a copy
    with values the caller computed itself (a job's deadline shared out per sentence),
    which are not checked again. Decoders read it as a mapping."""

    __slots__ = ("spec", "_values")

    def __init__(self, spec: DecoderSpec, values: Mapping[str, Any]) -> None:
        self.spec, self._values = spec, dict(values)

    @property
    def decoder(self) -> str:
        return self.spec.name

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Budget({self.spec.name!r}, {self._values!r})"

    def replace(self, values: Mapping[str, Any]) -> Budget:
        """This budget with `values` (fields of its spec) in place of its own."""
        unknown = set(values) - set(self.spec.names)
        if unknown:
            raise ValueError(f"not fields of decoder {self.spec.name!r}: {sorted(unknown)}")
        return Budget(self.spec, {**self._values, **values})


@dataclass(frozen=True)
class DecoderSpec:
    """A decoder: its name, budget fields and `decode(subject, budget)`, which gets a
    `Budget`. `component` names the part of a model it decodes with ("graph" or
    "transition"). Calling the spec decodes: a `Budget` of this decoder as it is, a
    plain mapping (a library caller's) after `budget` has checked it."""

    name: str
    doc: str
    fields: tuple[Field, ...]
    decode: Callable[..., Any] | None = field(default=None, compare=False)
    component: str = "graph"

    def __call__(self, subject: Any, budget: Mapping[str, Any] | None = None, *args: Any,
                 **kw: Any) -> Any:
        if not isinstance(budget, Budget):
            budget = self.budget(budget or {})
        elif budget.spec.name != self.name:
            raise ValueError(f"a budget of decoder {budget.spec.name!r} given to "
                             f"{self.name!r}")
        return self.decode(subject, budget, *args, **kw)

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def defaults(self) -> dict[str, Any]:
        """Field -> default, for every field but the deadline (none unless asked for)."""
        return {f.name: f.default for f in self.fields if f is not DEADLINE
                and f.name != DEADLINE.name}

    def caps(self, over: Mapping[str, float] | None = None) -> dict[str, float]:
        """Field -> serving ceiling: the fields' own, then a server's `over`."""
        own = {f.name: f.cap for f in self.fields if f.cap is not None}
        return {**own, **{k: v for k, v in (over or {}).items() if k in self.names}}

    def validate(self, budget: Mapping[str, Any], caps: Mapping[str, float] | None = None
                 ) -> dict[str, Any]:
        """The fields `budget` sets, checked and typed; BudgetError on a field this
        decoder lacks or a value out of its bounds or over `caps` (field -> ceiling)."""
        caps = caps or {}
        out = {}
        for k, v in budget.items():
            if k not in self.names:
                raise BudgetError(f"{k!r} does not apply to decoder {self.name!r}; its budget "
                                  f"fields are: {', '.join(self.names)}",
                                  "field_not_applicable", value=k)
            out[k] = self.field(k).check(v, caps.get(k))
        return out

    def budget(self, budget: Mapping[str, Any], caps: Mapping[str, float] | None = None
               ) -> Budget:
        """The one check: `validate(budget, caps)` over the defaults, every field set (the
        deadline only if given), as a `Budget`."""
        return Budget(self, {**self.defaults(), **self.validate(budget, caps)})

    def taken(self, budget: Mapping[str, Any]) -> Budget:
        """A budget the gateway completed and checked against this spec's description
        (`describe`), with the server's caps, as a `Budget`, not checked again; only
        its field names are, so that a gateway and worker that disagree on the fields
        fail loudly instead of decoding with a field left out."""
        if set(budget) - set(self.names) or set(self.defaults()) - set(budget):
            raise BudgetError(f"the budget of decoder {self.name!r} has fields "
                              f"{sorted(budget)}, not this worker's {self.names}",
                              "invalid_budget")
        return Budget(self, budget)

    def with_fields(self, extra: Iterable[Field] = (), defaults: Mapping[str, Any] | None = None
                    ) -> DecoderSpec:
        """This spec with `extra` fields and other defaults (a model's own, say)."""
        fields = [replace(f, default=defaults[f.name]) if defaults and f.name in defaults
                  else f for f in (*self.fields, *extra)]
        return replace(self, fields=tuple(fields))

    def describe(self) -> dict[str, Any]:
        """JSON for the workers' catalogue and GET /models."""
        return {"doc": self.doc, "fields": self.names, "defaults": self.defaults(),
                "params": {f.name: f.describe() for f in self.fields}}

    @classmethod
    def from_description(cls, name: str, d: Mapping[str, Any]) -> DecoderSpec:
        """The spec `describe` wrote, without its decode function (a worker that predates
        `params` gives its field names, checked no further)."""
        params = d.get("params") or {n: {"kind": "any", "default": d.get("defaults", {})
                                         .get(n), "doc": ""} for n in d.get("fields", ())}
        fields = tuple(Field(n, p.get("kind", "any"), p.get("default"), p.get("doc", ""),
                             p.get("lo"), p.get("hi"), bool(p.get("lo_open")),
                             tuple(p.get("choices", ())), bool(p.get("nullable")),
                             p.get("cap")) for n, p in params.items())
        return cls(name, d.get("doc", ""), fields)


def find(name: Any, available: Mapping[str, Any]) -> Any:
    """`available[name]`, or BudgetError `unknown_decoder` listing what there is: the one
    check of a decoder's name, against a model's decoders or a catalogue's."""
    if not isinstance(name, str) or name not in available:
        raise BudgetError(f"unknown decoder {name!r}; available: "
                          + ", ".join(sorted(available)), "unknown_decoder",
                          value=sorted(available))
    return available[name]

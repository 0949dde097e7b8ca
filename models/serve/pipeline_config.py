"""A model directory's `pipeline.json`, read once into frozen settings.

It names the model and its parts (subdirectories) and holds the settings that
`deptree train` calibrated on the development set: how the accurate tagger mixes
the linear tagger with the neural analyser, the weight of the analyser's arc scores
in the graph decoders, where relations come from, and the parser's re-tagging.
`format_version` 2 is what `deptree train` writes; a directory without it is the
older hand-written kind (format 1). A missing part or another format is a
`ModelError` that says which.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path, PurePath
from typing import Any

from models.errors import ModelError

FORMAT_VERSION = 2
PARTS = ("graph", "frontend", "neural", "transition", "contextual")
# the settings calibrated for an analyser, which the contextual one has its own of
CALIBRATED = ("tag_weight", "arc_weight", "label_mix", "tag_flips", "feats_min_prob",
              "decoder_defaults", "confidence_temperature")


@dataclass(frozen=True)
class TagFlips:
    """Re-tagging by the parser (`Pipeline.choose_tags`): at most `flips` hesitant
    words (tagger margin < `margin`), net of `weight` x margin, for `decoders` only;
    tuned on en_ewt dev (+0.5 UAS for greedy and sampling at 10-20% of their time;
    mst, selectional and bgi are chosen for speed and it would cost them 30-40%)."""

    flips: int = 4
    margin: float = 1.0
    weight: float = 1.0
    decoders: tuple[str, ...] = ("greedy", "sampling")


@dataclass(frozen=True)
class PipelineConfig:
    name: str
    language: str = "und"
    version: str = "0"
    format_version: int = 1
    graph: str | None = "graph"
    frontend: str | None = "frontend"
    neural: str | None = None
    transition: str | None = None
    # the analyser that also reads a pretrained encoder (the `contextual` tagger), and
    # its own calibrated settings (`CALIBRATED`), which stand in for the ones below
    # when a request chooses it
    contextual: str | None = None
    contextual_settings: dict[str, Any] = field(default_factory=dict)
    # the accurate tagger: linear scores + the analyser's log-probabilities / tag_weight
    tag_weight: float = 6.0
    # weight of the analyser's arc scores when a request leaves `neural` unset and
    # the analyser ran (the accurate tagger); calibrated on dev by `deptree train`
    arc_weight: float = 0.3
    # relations when the analyser ran: its log-probabilities plus label_mix x the graph
    # labeler's scores (0: the analyser's alone); None: the graph labeler's alone
    label_mix: float | None = 0.0
    tag_flips: TagFlips = field(default_factory=TagFlips)
    # FEATS when the analyser ran: its own where it gives them at least this
    # probability, the front-end guesser's over the same tags below it (0: always the
    # analyser's; above 1: always the guesser's); calibrated on dev
    feats_min_prob: float = 0.0
    # the model's own budget defaults, over the decoders' (e.g. a smaller greedy
    # `converge` where the analyser's scores make the search settle sooner)
    decoder_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    # greedy's per-arc confidence: the temperature of its first-order arcs with the
    # analyser's scores, calibrated on dev (None: models/graph/confidence.py's constant)
    confidence_temperature: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)    # everything else in the file

    @classmethod
    def read(cls, directory: Path) -> PipelineConfig:
        """The settings of directory/pipeline.json (a bare graph model directory, with
        model.json only, reads as a graph-only pipeline)."""
        path = directory / "pipeline.json"
        if not path.exists():
            return cls(name=directory.name, graph=None)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read {path}: {exc}") from exc
        version = raw.get("format_version", 1)
        if version not in (1, FORMAT_VERSION):
            raise ModelError(f"{path} has format version {version}; this deptree reads "
                             f"versions 1 and {FORMAT_VERSION}: retrain the model with "
                             "`deptree train`")
        known = {f.name for f in fields(cls)} - {"extra", "tag_flips"}
        if not isinstance(raw.get("contextual_settings", {}), dict):
            raise ModelError(f"{path}: contextual_settings must be an object")
        kw = {k: raw[k] for k in known if k in raw}
        kw.setdefault("name", directory.name)
        if version == 1:             # hand-written: parts as listed, or present
            kw.setdefault("transition", "transition" if "transition" in raw else None)
        flips = raw.get("tag_flips", {})
        if "decoders" in flips:
            flips = {**flips, "decoders": tuple(flips["decoders"])}
        if not isinstance(kw.get("feats_min_prob", 0.0), (int, float)):
            raise ModelError(f"{path}: feats_min_prob is {kw['feats_min_prob']!r}; it "
                             "must be a number")
        return cls(**kw, tag_flips=TagFlips(**flips),
                   extra={k: v for k, v in raw.items() if k not in known | {"tag_flips"}})

    def for_contextual(self) -> PipelineConfig:
        """These settings with the contextual analyser's calibrated ones in place of
        the accurate tagger's."""
        own = {k: v for k, v in self.contextual_settings.items() if k in CALIBRATED}
        flips = own.pop("tag_flips", None)
        if flips is not None:
            if "decoders" in flips:
                flips = {**flips, "decoders": tuple(flips["decoders"])}
            own["tag_flips"] = TagFlips(**{**asdict(self.tag_flips), **flips})
        return replace(self, **own)

    def part(self, directory: Path, name: str) -> Path | None:
        """The directory of part `name`, None when the model has none; a part that
        pipeline.json lists but the directory lacks is an error, and so is a part
        outside the directory (an absolute path, or one through `..`): a model's files
        are the ones in its directory."""
        sub = getattr(self, name)
        if sub is None:
            return None
        rel = PurePath(str(sub))
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise ModelError(f"model {self.name} in {directory}: its pipeline.json gives the "
                             f"{name} part as {sub!r}, which is outside the model directory; "
                             "a part is a subdirectory of it")
        path = directory / rel
        if not path.is_dir():
            if self.format_version == 1 and name in ("frontend", "neural"):
                return None                      # optional in hand-written directories
            raise ModelError(f"model {self.name} in {directory} is incomplete: its "
                             f"pipeline.json lists the {name} part, but {path} is missing")
        return path

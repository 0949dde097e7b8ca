"""Loading a model directory's parts, and the version string that names them.

`load_components(directory)` reads `pipeline.json` (`pipeline_config.py`) and the
parts it lists: the graph parser, the text front-end (tokenizer, linear tagger,
lemmatizer, FEATS), the neural analyser (and with it the accurate tagger) and the
transition parser. A part that is listed but missing, or unreadable, is a
`ModelError` naming it. The version string changes whenever anything that can change
an answer does (every file of every part, weights included, and the whole of
pipeline.json), so cached answers of an older model are never served for a newer one.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

from models.errors import ModelError
from models.graph.model import GraphModel
from models.serve.pipeline_config import PARTS, PipelineConfig
from models.serve.registry import check

logger = logging.getLogger(__name__)


@dataclass
class Components:
    directory: Path
    config: PipelineConfig
    graph: GraphModel
    tokenizer: object | None = None
    tagger: object | None = None           # the linear (fast) tagger
    lemmatizer: object | None = None
    feats: object | None = None
    analyser: object | None = None         # `NeuralAnalyser` or `AnalyserEnsemble`
    accurate: object | None = None         # `neural.tagger.AnalyserTagger`
    contextual: object | None = None       # the `NeuralAnalyser` that reads an encoder
    transition: object | None = None
    version: str = ""
    unavailable: dict[str, str] = field(default_factory=dict)  # tagger -> why it is off
    _views: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def analysers(self) -> int:
        """How many neural analysers the model averages (0: none)."""
        from models.neural.ensemble import analyser_count

        return analyser_count(self.analyser)

    def with_analysers(self, k: int | None) -> Components:
        """These parts with the accurate tagger and the neural scores of the first k
        analysers of the model's ensemble (`AnalyserEnsemble.first`); None or all of
        them: these parts themselves. The same calibrated weights serve every k."""
        if k is None or k == self.analysers:
            return self
        if k not in self._views:
            from models.neural.tagger import AnalyserTagger

            analyser = self.analyser.first(k)
            accurate = (AnalyserTagger(self.tagger, analyser, self.config.tag_weight)
                        if self.accurate is not None else None)
            self._views[k] = replace(self, analyser=analyser, accurate=accurate)
        return self._views[k]


    def with_contextual(self) -> Components:
        """These parts as the `contextual` tagger sees them: the analyser that reads
        the pretrained encoder in place of the other, with its own calibrated settings
        (`PipelineConfig.for_contextual`); the policy code below needs no other case."""
        if self.contextual is None:
            why = self.unavailable.get("contextual")
            raise ModelError(f"model {self.config.name} has no contextual analyser"
                             + (f" here: {why}" if why else ""))
        if "contextual" not in self._views:
            from models.neural.tagger import AnalyserTagger

            cfg = self.config.for_contextual()
            accurate = AnalyserTagger(self.tagger, self.contextual, cfg.tag_weight)
            self._views["contextual"] = replace(self, config=cfg, analyser=self.contextual,
                                                accurate=accurate)
        return self._views["contextual"]


def _digest(root: Path) -> str:
    """First 8 hex digits of the SHA-256 of the files under root (names and bytes)."""
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        data = f.read_bytes()
        h.update(f"{f.relative_to(root)}\0{len(data)}\0".encode() + data)
    return h.hexdigest()[:8]


def _frontend(c: Components, fe: Path) -> None:
    from models.text.feats import FeatsGuesser
    from models.text.lemmatizer import Lemmatizer
    from models.text.tagger import Tagger
    from models.text.tokenizer import Tokenizer

    try:
        c.tokenizer = Tokenizer.load(str(fe / "tokenizer"))
        c.tagger = Tagger.load(str(fe / "tagger"))
        c.lemmatizer = Lemmatizer.load(str(fe / "lemmatizer"), c.tagger.word_classes)
        if (fe / "feats").is_dir():
            c.feats = FeatsGuesser.load(str(fe / "feats"))
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot load the front-end of model {c.config.name} from {fe}: "
                         f"{exc}") from exc
    g = c.graph
    if g.word_classes is not None and g.word_classes == c.tagger.word_classes:
        g.word_classes = c.tagger.word_classes            # one copy in memory


def _neural(c: Components, nd: Path) -> None:
    from models.neural.ensemble import load_analyser
    from models.neural.tagger import AnalyserTagger

    c.analyser = load_analyser(nd)
    if c.tagger is not None:
        try:
            c.accurate = AnalyserTagger(c.tagger, c.analyser, c.config.tag_weight)
        except ValueError as exc:
            raise ModelError(f"model {c.config.name}: {exc}") from exc


def load_components(directory: Path) -> Components:
    cfg = check(directory)          # names a damaged or outside file before loading
    gdir = cfg.part(directory, "graph") if cfg.graph else directory
    c = Components(directory, cfg, GraphModel.load(gdir))
    fe = cfg.part(directory, "frontend")
    if fe is not None:
        _frontend(c, fe)
    nd = cfg.part(directory, "neural")
    if nd is not None:
        _neural(c, nd)
    elif cfg.format_version == 1 and (directory / "arcs").is_dir():
        logger.warning("%s: its neural tagger and arc scorer are of an older kind this "
                       "deptree no longer reads; retrain the model with `deptree train`",
                       directory)
    cd = cfg.part(directory, "contextual")
    if cd is not None:
        _contextual(c, cd)
    td = cfg.part(directory, "transition")
    if td is not None:
        from models import transition as transition_model

        c.transition = transition_model.load(td)
    c.version = _version(c)
    logger.info("loaded model %s from %s (order %d%s%s%s)", cfg.name, directory,
                c.graph.order, ", front-end" if c.tagger else "",
                ", neural analyser" if c.analyser else "",
                ", transition parser" if c.transition else "")
    return c


def _contextual(c: Components, cd: Path) -> None:
    """The contextual analyser, or, where its encoder's package is missing or of another
    version, none: the model serves its other taggers (the shipped en_ewt under the
    runtime install, which has no encoder), and `unavailable` says why the contextual
    one is off, with what to install. Any other fault of the part is the model's."""
    from models.contextual.source import EncoderMissing
    from models.neural.network import NeuralAnalyser

    try:
        c.contextual = NeuralAnalyser.load(str(cd))
    except EncoderMissing as exc:
        c.unavailable["contextual"] = str(exc)
        logger.warning("model %s: the contextual tagger is off: %s", c.config.name, exc)
        return
    if c.contextual.context is None:
        raise ModelError(f"model {c.config.name}: its contextual part {cd} reads no encoder")


def _version(c: Components) -> str:
    """`version` of pipeline.json, then a digest of every part's files (`_digest`: names
    and bytes, weights included) and of the whole of pipeline.json: any file that can
    change an answer changes the version (a setting, a weight, a part's own model.json)."""
    cfg, d = c.config, c.directory
    v = cfg.version
    for name in PARTS:
        part = d if name == "graph" and cfg.graph is None else cfg.part(d, name)
        if part is not None:
            v += f"+{name[0]}" + _digest(part)
    if (d / "pipeline.json").exists():
        v += "+s" + hashlib.sha256((d / "pipeline.json").read_bytes()).hexdigest()[:8]
    return v

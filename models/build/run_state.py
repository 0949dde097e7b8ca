"""A build's options and its run state: the paths, `.build/state.json` (the stages
that ended, what each recorded), and the train/dev split the stages read.

`prepare` starts a build or resumes the interrupted one in the same directory; a
rerun with another train file or other options is refused rather than mixed.
"""
from __future__ import annotations

import hashlib
import json
import logging
import resource
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from models.conllu import read_conllu, write_conllu
from models.errors import ModelError

logger = logging.getLogger(__name__)

STAGES = ("frontend", "jackknife", "neural", "contextual", "graph", "transition",
          "calibrate")
OPTIONAL = ("neural", "contextual", "transition")   # stages a model can be built without
HOLDOUT_EVERY = 10
STATE = "state.json"


@dataclass
class BuildOptions:
    name: str = ""                 # the model's name (default: the output directory's)
    language: str = "und"
    vectors: str = ""              # pretrained word vectors for the neural analyser
    encoder: str = ""              # the contextual analyser's encoder (`contextual.source`)
    word_classes: str = ""         # "spacy-lookups-data" (English) or a wordclasses.npz dir
    skip: tuple[str, ...] = ()     # stages left out (`OPTIONAL` only)
    order: int = 3                 # of the graph parser
    tensor_rank: int | None = None         # of the graph parser's tensor arc scores; 0: none
    global_features: bool | None = None    # the graph parser's (greedy and sampling use them)
    # ...these two: None, kept where they help on the dev split (`graph_stage.py`)
    graph_epochs: int = 0          # 0: the trainer's defaults
    neural_epochs: int = 0         # each analyser's; 0: `neural.train.auto_epochs`
    neural: dict = field(default_factory=dict)   # other `NeuralConfig` fields (sizes)
    analysers: int = 0             # neural analysers averaged; 0: `auto_analysers`
    transition_epochs: int = 8
    jackknife: int | None = None   # folds of the transition parser's training tags; 0: gold;
                                   # None: `auto_folds` (the graph parser's are gold)
    max_sentences: int = 0         # train on the first N sentences only (0: all)
    seed: int = 0
    keep_work: bool = False        # keep .build/ (checkpoints, splits) after the last stage
    time_budget: float = 0.0       # minutes the whole build aims at (`neural_seconds`); 0: none


@dataclass
class Run:
    """Paths and state of one build."""

    out: Path
    train: Path                    # the training file the stages read
    dev: Path                      # the development file (given, or held out)
    dev_given: bool
    options: BuildOptions
    state: dict = field(default_factory=dict)

    @property
    def work(self) -> Path:
        return self.out / ".build"

    def done(self, stage: str) -> bool:
        return stage in self.state.get("done", {})

    def finish(self, stage: str, seconds: float, **info) -> None:
        self.state.setdefault("done", {})[stage] = {"seconds": round(seconds, 1),
                                                    "peak_rss_mb": _peak_rss_mb(), **info}
        self._write()

    def _write(self) -> None:
        tmp = self.work / (STATE + ".tmp")
        tmp.write_text(json.dumps(self.state, indent=1) + "\n")
        tmp.replace(self.work / STATE)


STAGE_RECORD = ("seconds", "peak_rss_mb")   # what `finish` adds to a stage's own info
RESUMABLE_WITH_OTHER = ("time_budget",)      # options a build may be resumed with changed


def _peak_rss_mb() -> int:
    """The largest resident set of this process or any child it waited for (the neural
    stage's), so far in this run: a resumed run's stages record their own."""
    return round(max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                     resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def prepare(train_path: Path, dev_path: Path | None, out: Path, opts: BuildOptions) -> Run:
    """The run's state: a fresh one, or the interrupted one in out/.build."""
    if not train_path.is_file():
        raise ModelError(f"no training file {train_path}")
    if dev_path is not None and not dev_path.is_file():
        raise ModelError(f"no development file {dev_path}")
    if opts.time_budget < 0:
        raise ModelError(f"--time-budget {opts.time_budget:g}: give minutes, or 0 for none")
    if opts.analysers < 0:
        raise ModelError(f"--analysers {opts.analysers}: give 1 or more, or 0 for the "
                         "default by the treebank's size")
    eps = opts.neural.get("label_smoothing", 0.0)
    if not 0 <= eps < 1:
        raise ModelError(f"--label-smoothing {eps:g}: give a share of at least 0 and below 1")
    if opts.tensor_rank is not None and opts.tensor_rank < 0:
        raise ModelError(f"--tensor-rank {opts.tensor_rank}: give a rank, or 0 for none")
    bad = set(opts.skip) - set(OPTIONAL)
    if bad:
        raise ModelError(f"cannot skip {', '.join(sorted(bad))}: only "
                         f"{', '.join(OPTIONAL)} are optional")
    work = out / ".build"
    work.mkdir(parents=True, exist_ok=True)
    options = {k: v for k, v in asdict(opts).items() if k not in RESUMABLE_WITH_OTHER
               and not (k == "encoder" and not v)}
    key = json.loads(json.dumps({"train": _sha(train_path),
                                 "dev": _sha(dev_path) if dev_path else None,
                                 "options": options | {"keep_work": None}}))
    state_path = work / STATE
    if state_path.exists():
        state = json.loads(state_path.read_text())
        if state.get("key") != key:
            raise ModelError(f"{out} holds an unfinished build from another train file or "
                             "other options: choose another --out, or delete it")
        logger.info("resuming the build in %s (done: %s)", out,
                    ", ".join(state.get("done", {})) or "nothing yet")
    else:
        if (out / "pipeline.json").exists():
            raise ModelError(f"{out} already holds a model: choose another --out")
        state = {"key": key, "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    run = Run(out, work / "train.conllu", work / "dev.conllu", dev_path is not None, opts,
               state)
    if not run.done("split"):
        split(train_path, dev_path, run)
        run.finish("split", 0.0)
    return run


def split(train_path: Path, dev_path: Path | None, run: Run) -> None:
    """Copy train (its first max_sentences) and dev into the work area, or hold out
    every HOLDOUT_EVERY-th training sentence as dev."""
    sents = list(read_conllu(train_path))
    if run.options.max_sentences:
        sents = sents[:run.options.max_sentences]
    if dev_path is None:
        if len(sents) < 2 * HOLDOUT_EVERY:
            raise ModelError(f"{train_path} has {len(sents)} sentences: too few to hold out "
                             f"a development slice; give --dev")
        dev = [s for i, s in enumerate(sents) if i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1]
        sents = [s for i, s in enumerate(sents) if i % HOLDOUT_EVERY != HOLDOUT_EVERY - 1]
        logger.warning("no --dev: holding out every %dth training sentence (%d of %d) for "
                       "model selection; the model trains on the other %d", HOLDOUT_EVERY,
                       len(dev), len(dev) + len(sents), len(sents))
    else:
        dev = list(read_conllu(dev_path))
    write_conllu(sents, run.train)
    write_conllu(dev, run.dev)

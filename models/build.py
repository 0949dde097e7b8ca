"""One command, a complete model: every part of a model directory from one treebank.

`build_model(train, dev, out, options)` runs the stages in order: the text
front-end (tokenizer, splitter, linear tagger, lemmatizer, FEATS), jackknifed
training tags, the neural analyser, the contextual analyser (the same network, also
reading a pretrained encoder's states, where `encoder` names one), the graph
parser, the transition parser; then
it calibrates on the development set how the pipeline combines them
(`calibrate.py`) and writes `pipeline.json`. The result is what `deptree parse
--model DIR`, `deptree serve` and `GET /models` use as it is.

Each stage shows a progress bar, writes its own subdirectory and, when it ends, its
entry in `.build/state.json`; a rerun skips the stages that ended and resumes the
one that was interrupted from its checkpoints (the front-end's parts, the jackknife's
folds, the graph and neural trainers' epochs, the transition parser's epochs and
bootstrapping rounds). A rerun with another train file, or other options, is refused
rather than mixed. The neural and transition stages run in processes of their own.
Without a development file a fixed slice of train, every `HOLDOUT_EVERY`-th sentence,
is held out for model selection and calibration.
A build aims at `time_budget` minutes: the neural analysers train on what the other
stages leave them (`neural_seconds`), fewer epochs where theirs would not fit.
Nothing here parses flags (`app/cli.py` does).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import resource
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from models.conllu import Sentence, read_conllu, write_conllu
from models.errors import ModelError

logger = logging.getLogger(__name__)

STAGES = ("frontend", "jackknife", "neural", "contextual", "graph", "transition",
          "calibrate")
OPTIONAL = ("neural", "contextual", "transition")   # stages a model can be built without
HOLDOUT_EVERY = 10
ENSEMBLE_WORDS = 100_000       # below it, two analysers by default (`auto_analysers`)
LATER_SHARE = 1.0              # `neural_seconds`: the later stages' time as a share of the
LATER_MIN = 300.0              # earlier ones', and at least this many seconds
CALIBRATE_TWICE = 1.5          # the later stages' share with a contextual analyser too
ANALYSER_OVERHEAD = 45.0       # seconds an analyser's process spends outside its epochs
FOLDS = 10                     # jackknife folds up to FOLD_SENTENCES / (FOLDS - 1) sentences
FOLD_SENTENCES = 180_000       # sentences the fold taggers train on in all, above that
STATE = "state.json"
JAX_CACHE = "jax-cache"           # under .build: the neural stage's compiled programs
# glibc (2.35 on) asks for transparent huge pages for its large blocks in the neural
# stage's process: XLA maps each training step's buffers afresh, and they fault in
# 2 MB pages instead of 4 kB ones: 13x fewer faults, a step 1.07-1.1x faster
# (bench/journal/12-any-treebank.md, "Huge pages, and bfloat16 on AVX512-BF16"); an older glibc ignores the setting.
HUGE_PAGES = "glibc.malloc.hugetlb=1"


@dataclass
class BuildOptions:
    name: str = ""                 # the model's name (default: the output directory's)
    language: str = "und"
    vectors: str = ""              # pretrained word vectors for the neural analyser
    encoder: str = ""              # the contextual analyser's encoder (`contextual.source`)
    word_classes: str = ""         # "spacy-lookups-data" (English) or a wordclasses.npz dir
    skip: tuple[str, ...] = ()     # stages left out (`OPTIONAL` only)
    order: int = 3                 # of the graph parser
    graph_epochs: int = 0          # 0: the trainer's defaults
    neural_epochs: int = 0         # each analyser's; 0: `neural.train.auto_epochs`
    neural: dict = field(default_factory=dict)   # other `NeuralConfig` fields (sizes)
    analysers: int = 0             # neural analysers averaged; 0: `auto_analysers`
    transition_epochs: int = 8
    jackknife: int | None = None   # folds of the training tags; 0: gold; None: `auto_folds`
    max_sentences: int = 0         # train on the first N sentences only (0: all)
    seed: int = 0
    keep_work: bool = False        # keep .build/ (checkpoints, splits) after the last stage
    time_budget: float = 0.0       # minutes the whole build aims at (`neural_seconds`); 0: none


@dataclass
class _Run:
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


def _prepare(train_path: Path, dev_path: Path | None, out: Path, opts: BuildOptions) -> _Run:
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
    bad = set(opts.skip) - set(OPTIONAL)
    if bad:
        raise ModelError(f"cannot skip {', '.join(sorted(bad))}: only "
                         f"{', '.join(OPTIONAL)} are optional")
    work = out / ".build"
    work.mkdir(parents=True, exist_ok=True)
    options = {k: v for k, v in asdict(opts).items() if k not in RESUMABLE_WITH_OTHER
               and not (k == "encoder" and not v)}    # builds from before it resume
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
    run = _Run(out, work / "train.conllu", work / "dev.conllu", dev_path is not None, opts,
               state)
    if not run.done("split"):
        _split(train_path, dev_path, run)
        run.finish("split", 0.0)
    return run


def _split(train_path: Path, dev_path: Path | None, run: _Run) -> None:
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


# ---- stages ---------------------------------------------------------------------------
def _frontend(run: _Run) -> dict:
    from models.text.train import train_frontend

    wc = run.options.word_classes or None
    metrics = train_frontend(str(run.train), str(run.dev), str(run.out / "frontend"),
                             seed=run.options.seed, word_classes=_word_classes(wc),
                             checkpoints=str(run.work / "frontend"))
    return {"dev": metrics.get("dev_metrics", {})}


def _word_classes(source: str | None):
    if not source:
        return None
    from models.graph.train import load_word_classes

    return load_word_classes(source)


def auto_folds(n_sentences: int) -> int:
    """Jackknife folds when `--jackknife` is not given: FOLDS up to 20,000 sentences;
    above, fewer (3 at least), so that the folds' taggers train on about FOLD_SENTENCES
    sentences in all instead of 9 times the treebank. On en_ewt train (12,544
    sentences) 4 folds gave tags 0.14 UPOS less accurate than 10 (97.06 against 97.20),
    each fold's tagger seeing 9,400 sentences instead of 11,300; on a treebank of
    50,000 the 4 folds' taggers see 37,500 each, and the stage takes ~12 minutes
    instead of ~26 (bench/journal/12-any-treebank.md, "Fewer jackknife folds for large treebanks")."""
    return max(3, min(FOLDS, 1 + FOLD_SENTENCES // max(1, n_sentences)))


def jackknifed(options: BuildOptions) -> bool:
    """Whether the parsers train on jackknifed tags (else on the gold ones)."""
    return options.jackknife is None or options.jackknife > 1


def _jackknife(run: _Run) -> dict:
    """The training file with k-fold jackknifed UPOS/XPOS (`text/jackknife.py`), from
    taggers trained as the front-end's, for the graph and transition parsers."""
    from models.text.jackknife import retag_jackknifed
    from models.text.tagger import Tagger

    wc = _word_classes(run.options.word_classes or None)
    sents = list(read_conllu(run.train))
    folds = run.options.jackknife or auto_folds(len(sents))
    logger.info("jackknife: %d folds of %d sentences", folds, len(sents))
    upos = retag_jackknifed(sents, folds, run.options.seed,
                            lambda train: Tagger.train(train, bidirectional=True,
                                                       word_classes=wc),
                            checkpoints=str(run.work / "jackknife"))
    write_conllu(sents, run.work / "train.jackknifed.conllu")
    return {"upos": round(upos, 2), "folds": folds}


def _tagged_train(run: _Run) -> Path:
    if jackknifed(run.options):
        return run.work / "train.jackknifed.conllu"
    return run.train


def auto_analysers(n_words: int) -> int:
    """Neural analysers to average when `--analysers` is 0: two below ENSEMBLE_WORDS
    training words, where the pair beats its first member by 0.7 / 0.9 UAS / LAS at 75k
    words and 1.6 / 2.0 at 22k (bench/journal/12-any-treebank.md, "Two analysers up to 100,000 training
    words"); one above, where the gain shrinks (en_ewt, 205k: 0.2 / 0.4) and en_ewt's
    1,500 tokens/s would not hold. The stage sees the same number of words in all
    (`neural.train.auto_epochs`): one analyser twice as many as each of a pair, so the
    stage takes about 45 minutes on 2 cores with bfloat16 products at any size from
    5,000 words up (less below, where epochs are capped)."""
    return 2 if n_words < ENSEMBLE_WORDS else 1


def neural_seconds(run: _Run, analysers: int) -> float | None:
    """Seconds each analyser may train (compiling and dev evaluations included) for the
    build to end within `time_budget` minutes, or None without one. The stages done so
    far took what they took; the later ones (graph, transition, calibrate) get
    LATER_SHARE of that time, at least LATER_MIN: measured, they took 0.89-0.92x the
    front-end and jackknife on en_ewt and 104-229 s on the three smaller treebanks
    (bench/journal/12-any-treebank.md, "A time budget for the build"). Each analyser's process spends
    ANALYSER_OVERHEAD outside its epochs (vectors, encoding, saving; 15-30 s measured).
    The later stages' share is judged by the stages before the analysers' (front-end,
    jackknife), whenever it is asked. The neural stage counts the contextual analyser,
    while its stage is still to run, as one analyser more among which the time left is
    shared; calibration then runs twice (CALIBRATE_TWICE)."""
    if not run.options.time_budget:
        return None
    done = run.state.get("done", {})
    before = sum(v["seconds"] for v in done.values())
    early = sum(v["seconds"] for k, v in done.items() if k not in ("neural", "contextual"))
    later = max(LATER_MIN, LATER_SHARE * early) * (CALIBRATE_TWICE if run.options.encoder
                                                   else 1.0)
    left = 60 * run.options.time_budget - before - later
    return max(0.0, left / analysers - ANALYSER_OVERHEAD)


def contextual_pending(run: _Run) -> int:
    """1 while the contextual stage is still to run in this build, else 0."""
    o = run.options
    return int(bool(o.encoder) and "contextual" not in o.skip and not run.done("contextual"))


def _neural(run: _Run) -> dict:
    """Each analyser is trained in a process of its own: JAX keeps what it allocated
    (compiled programs, its allocator's arenas) for the life of a process, ~1 GB the
    later stages would carry; the parent's peak memory stays that of the linear models.
    Member k > 1 (seed + k - 1) goes to neural/member-k (`neural/ensemble.py`)."""
    import importlib.util

    from models.neural.ensemble import MEMBER
    from models.neural.train import auto_epochs

    for package in ("jax", "optax"):
        if importlib.util.find_spec(package) is None:
            raise ModuleNotFoundError(f"the neural stage needs {package}")
    o = run.options
    n_words = sum(len(s.words) for s in read_conllu(run.train))
    n = o.analysers or auto_analysers(n_words)
    epochs = o.neural_epochs or auto_epochs(n_words, n)
    seconds = neural_seconds(run, n + contextual_pending(run))
    if seconds is not None:
        logger.info("time budget of %.0f min: each analyser may train %.0f s", o.time_budget,
                    seconds)
    done = []
    for k in range(1, n + 1):
        out = run.out / "neural" if k == 1 else run.out / "neural" / f"{MEMBER}{k}"
        work = run.work if k == 1 else run.work / f"neural-{MEMBER}{k}"
        if not (out / "analyser.json").exists():      # not trained before an interruption
            work.mkdir(parents=True, exist_ok=True)
            logger.info("neural analyser %d of %d (seed %d)", k, n, o.seed + k - 1)
            member = replace(o, seed=o.seed + k - 1, neural_epochs=epochs)
            args = (str(run.train), str(run.dev), str(out), str(work), o.vectors,
                    asdict(member), str(run.out / "frontend"), str(run.work / JAX_CACHE),
                    seconds)
            _run_child(args, out)
        done.append(_analyser_summary(out))
    return {**done[0], "analysers": n, "members": done[1:]} if n > 1 else done[0]


def _analyser_summary(out: Path) -> dict:
    """What the build's state records of the analyser trained into out: its dev figures,
    best epoch, epochs (and those planned, where a budget cut them) and encoder."""
    meta = json.loads((out / "analyser.json").read_text(encoding="utf-8"))
    return {"dev_argmax": meta.get("dev", {}), "best_epoch": meta.get("best_epoch"),
            "epochs": meta.get("epochs"),
            **{k: meta[k] for k in ("planned_epochs", "encoder") if k in meta}}


def _run_child(args: tuple, out: Path, stage: str = "neural") -> None:
    _spawn(_train_neural, args, stage, out / "analyser.json", tunables=HUGE_PAGES)


CONTEXTUAL_ANALYSERS_WORDS = 2   # the contextual analyser's epochs: as each of a pair's


def _contextual(run: _Run) -> dict:
    """One analyser that also reads the encoder's states (frozen, computed once into
    .build/contextual), in a process of its own as the neural stage's are. It sees as
    many words as each analyser of a pair (`auto_epochs(n, 2)`): it learns faster."""
    from models.neural.network import share_vectors
    from models.neural.train import auto_epochs

    o = run.options
    n_words = sum(len(s.words) for s in read_conllu(run.train))
    epochs = o.neural_epochs or auto_epochs(n_words, CONTEXTUAL_ANALYSERS_WORDS)
    seconds = neural_seconds(run, 1)
    out, work = run.out / "contextual", run.work / "contextual"
    if not (out / "analyser.json").exists():
        work.mkdir(parents=True, exist_ok=True)
        logger.info("contextual analyser (encoder %s, %d epochs)", o.encoder, epochs)
        member = replace(o, neural_epochs=epochs)
        args = (str(run.train), str(run.dev), str(out), str(work), o.vectors, asdict(member),
                str(run.out / "frontend"), str(run.work / JAX_CACHE), seconds, o.encoder)
        _run_child(args, out, "contextual")
    share_vectors(str(out), "neural")        # the neural analyser's, when the same
    return _analyser_summary(out)


def _child_start() -> None:
    """A stage process's set-up: log as the build does, and end with the build's process
    however that ends (on Linux): a killed build left its neural stage training for
    the best part of an hour."""
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # JAX says at INFO, on every machine without one, that it found no TPU library.
    logging.getLogger("jax._src.xla_bridge").setLevel(logging.WARNING)
    _die_with_parent()


def _die_with_parent() -> None:
    """Ask Linux for SIGTERM when the parent process ends (prctl PR_SET_PDEATHSIG);
    exit at once if it has already ended. Elsewhere, nothing."""
    import ctypes
    import multiprocessing
    import os
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:
        sys.exit("the build's process has ended")


def _spawn(target, args: tuple, stage: str, result: Path, tunables: str = "") -> None:
    """target(*args) in a spawned process of its own, waited for; a ModelError unless
    it exits 0 having written `result`. tunables: glibc settings added to the child's
    GLIBC_TUNABLES (glibc reads them when a process starts)."""
    import multiprocessing

    result.unlink(missing_ok=True)
    proc = multiprocessing.get_context("spawn").Process(target=target, args=args,
                                                         name=f"deptree-{stage}")
    with _environment("GLIBC_TUNABLES", _tunables(tunables)):
        proc.start()
    try:
        proc.join()
    except BaseException:
        proc.terminate()
        proc.join()
        raise
    if proc.exitcode != 0 or not result.exists():
        raise ModelError(f"the {stage} stage failed (exit code {proc.exitcode}; see the log "
                         "above); run the command again to resume it")


def _tunables(extra: str) -> str | None:
    """GLIBC_TUNABLES with `extra` appended, unless the user's own value names it."""
    import os

    mine = [t for t in os.environ.get("GLIBC_TUNABLES", "").split(":") if t]
    names = {t.split("=")[0] for t in mine}
    add = [t for t in extra.split(":") if t and t.split("=")[0] not in names]
    return ":".join(mine + add) or None


@contextlib.contextmanager
def _environment(name: str, value: str | None):
    """os.environ[name] = value (None: unset) for the block, then as it was: a spawned
    process inherits the environment it starts with."""
    import os

    old = os.environ.get(name)

    def put(v):
        if v is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = v

    put(value)
    try:
        yield
    finally:
        put(old)


def _use_compilation_cache(directory: str) -> None:
    """Keep JAX's compiled programs in directory, unless JAX_COMPILATION_CACHE_DIR names
    another: the second analyser and a resumed stage then load what the first compiled
    (the tiny test build: 47 s instead of 73). Every program is kept, the many small
    ones of the weights' set-up too, not only those over a second to compile (unless
    JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS says otherwise)."""
    import os

    import jax

    if not os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        jax.config.update("jax_compilation_cache_dir", directory)
    if not os.environ.get("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"):
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


def _train_neural(train: str, dev: str, out: str, work: str, vectors_path: str,
                  options: dict, frontend: str, compiled: str,
                  seconds: float | None = None, encoder: str = "") -> None:
    """The neural stage's process: train the analyser (within `seconds` of training, if
    given; reading the named encoder's states, if given) and save it to out."""
    _child_start()
    _use_compilation_cache(compiled)
    from models.neural.train import NeuralConfig, train_analyser
    from models.text.tagger import Tagger

    vectors = None
    if vectors_path:
        from models.text.word_vectors import WordVectors

        vectors = WordVectors.read(vectors_path)
    linear = Tagger.load(str(Path(frontend) / "tagger"))
    cfg = NeuralConfig(**{**options["neural"], "epochs": options["neural_epochs"],
                          "seed": options["seed"]})
    context = None
    if encoder:
        from models.contextual.features import ContextualFeatures
        from models.contextual.source import EncoderSpec

        context = ContextualFeatures(EncoderSpec.new(encoder))
    analyser = train_analyser(_words(Path(train)), _words(Path(dev)), cfg,
                              classes=linear.classes, vectors=vectors, checkpoint_dir=work,
                              seconds=seconds, context=context)
    analyser.save(out)


def _words(path: Path) -> list[list[tuple]]:
    return [[(w.form, w.upos, w.xpos, w.feats, w.head, w.deprel) for w in s.words]
            for s in read_conllu(path)]


def _graph(run: _Run) -> dict:
    from models.graph.train import TrainConfig, train

    o = run.options
    shared = run.out / "frontend" / "tagger"        # one copy of the clusters, the tagger's
    cfg = TrainConfig(order=o.order, seed=o.seed, jackknife=0,
                      word_classes=str(shared) if o.word_classes else "",
                      word_classes_at="../frontend/tagger" if o.word_classes else "")
    if o.graph_epochs:
        cfg.epochs = cfg.pruner_epochs = cfg.label_epochs = o.graph_epochs
    model = train(str(_tagged_train(run)), str(run.out / "graph"), str(run.dev), cfg,
                  command="deptree train (graph stage)", checkpoint_dir=run.work / "graph")
    return {"order": model.order}


def _transition(run: _Run) -> dict:
    """In a process of its own, as the neural stage: the two dense tables it trains (up
    to 0.5 GB the pair, `transition.train.MAX_CELLS`) and its examples would come on top
    of what the build process keeps from the earlier stages (~1.1 GB)."""
    out = run.out / "transition"
    args = (str(_tagged_train(run)), str(run.dev), str(out), str(run.work / "transition"),
            str(run.out / "frontend"), run.options.transition_epochs, run.options.seed)
    _spawn(_train_transition, args, "transition", out / "model.json")
    meta = json.loads((out / "model.json").read_text(encoding="utf-8"))
    return {k: meta["training"].get(k) for k in ("best_epoch", "dev_uas_greedy",
                                                   "dev_las_greedy")}


def _train_transition(train: str, dev: str, out: str, work: str, frontend: str, epochs: int,
                      seed: int) -> None:
    """The transition stage's process: train on the jackknifed tags, select on dev
    tagged by the front-end, save to out."""
    _child_start()
    from models.transition.train import train as train_transition

    train_transition(train, _retagged(Path(frontend), list(read_conllu(dev))), out,
                     n_rows=None, epochs=epochs, alpha=0.05, prune=0.025, bootstrap_rounds=2,
                     bootstrap_epochs=4, seed=seed, command="deptree train (transition stage)",
                     checkpoint_dir=work)


def _retagged(fe: Path, sents: list[Sentence]) -> list[Sentence]:
    """Copies of sentences tagged and lemmatized by the linear tagger of the front-end
    in fe."""
    from models.text.lemmatizer import Lemmatizer
    from models.text.tagger import Tagger

    tagger = Tagger.load(str(fe / "tagger"))
    lemmatizer = Lemmatizer.load(str(fe / "lemmatizer"), tagger.word_classes)
    out = []
    for s in sents:
        forms = [w.form for w in s.words]
        upos, xpos = tagger.tag(forms)
        lemmas = lemmatizer.lemmatize(forms, upos, xpos)
        out.append(Sentence.from_words([replace(w, upos=u, xpos=x, lemma=m) for w, u, x, m
                                        in zip(s.words, upos, xpos, lemmas)]))
    return out


def _calibrate(run: _Run) -> dict:
    from models.calibrate import calibrate

    _write_pipeline(run, {})
    settings = calibrate(run.out, run.dev)
    if (run.out / "contextual").is_dir():
        settings["contextual_settings"] = calibrate(run.out, run.dev, contextual=True)
    _write_pipeline(run, settings)
    return settings


def _write_pipeline(run: _Run, settings: dict) -> None:
    from models.pipeline_config import FORMAT_VERSION

    o = run.options
    parts = {p: p for p in ("graph", "neural", "contextual", "transition")
             if (run.out / p).is_dir()}
    meta = {"format_version": FORMAT_VERSION, "name": o.name or run.out.name,
            "language": o.language, "version": "1", "frontend": "frontend", **parts,
            "description": f"trained by `deptree train` on {run.state['key']['train']} "
                           f"(sha256/16 of the training file)", **settings,
            "build": {"options": asdict(o), "dev": "given" if run.dev_given else
                      f"every {HOLDOUT_EVERY}th training sentence held out",
                      "stages": {k: {f: v for f, v in info.items() if f not in settings}
                                 for k, info in run.state.get("done", {}).items()}}}
    (run.out / "pipeline.json").write_text(json.dumps(meta, indent=1) + "\n")


_RUNNERS = {"frontend": _frontend, "jackknife": _jackknife, "neural": _neural,
            "contextual": _contextual, "graph": _graph, "transition": _transition, "calibrate": _calibrate}


def build_model(train: str | Path, dev: str | Path | None, out: str | Path,
                options: BuildOptions | None = None) -> Path:
    """Train every stage not yet done into out; return out."""
    opts = options or BuildOptions()
    run = _prepare(Path(train), Path(dev) if dev else None, Path(out), opts)
    todo = [s for s in STAGES if s not in opts.skip
            and not (s == "jackknife" and not jackknifed(opts))
            and not (s == "contextual" and not opts.encoder)]
    t_all = time.time()
    for i, stage in enumerate(todo, 1):
        if run.done(stage):
            logger.info("stage %d/%d %s: done before", i, len(todo), stage)
            continue
        logger.info("stage %d/%d %s", i, len(todo), stage)
        t0 = time.time()
        info = _RUNNERS[stage](run) or {}
        run.finish(stage, time.time() - t0, **info)
        logger.info("stage %d/%d %s: done in %.0fs", i, len(todo), stage, time.time() - t0)
    _write_pipeline(run, {k: v for k, v in run.state["done"]["calibrate"].items()
                          if k not in STAGE_RECORD})
    if not opts.keep_work:
        shutil.rmtree(run.work, ignore_errors=True)
    logger.info("model written to %s (%.0fs in this run)", run.out, time.time() - t_all)
    return run.out

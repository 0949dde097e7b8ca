"""One command, a complete model: every part of a model directory from one treebank.

`build_model(train, dev, out, options)` runs the stages in order: the text
front-end (tokenizer, splitter, linear tagger, lemmatizer, FEATS), jackknifed
training tags for the transition parser, the neural analyser, the contextual analyser
(the same network, also reading a pretrained encoder's states, where `encoder` names
one), the graph parser (with the parts the dev split keeps: `graph_stage.py`), the
transition parser; then
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
The stages are here; a build's run state is `run_state.py`'s, its child processes
`children.py`'s. Nothing here parses flags (`deptree/cli/train.py` does).
"""
from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import asdict, replace
from pathlib import Path

from models.conllu import read_conllu, write_conllu

from .children import HUGE_PAGES, JAX_CACHE, spawn, train_neural, train_transition
from .run_state import HOLDOUT_EVERY, STAGE_RECORD, STAGES, BuildOptions, Run, prepare

logger = logging.getLogger(__name__)

ENSEMBLE_WORDS = 100_000       # below it, two analysers by default (`auto_analysers`)
LATER_SHARE = 1.0              # `neural_seconds`: the later stages' time as a share of the
LATER_MIN = 300.0              # earlier ones', and at least this many seconds
CALIBRATE_TWICE = 1.5          # the later stages' share with a contextual analyser too
GRAPH_CANDIDATES_SHARE = 1.2   # the graph stage's candidates (parts left to the dev split)
GRAPH_CANDIDATES_MIN = 180.0   # take this share of the early stages' time, at least this
ANALYSER_OVERHEAD = 45.0       # seconds an analyser's process spends outside its epochs
FOLDS = 10                     # jackknife folds up to FOLD_SENTENCES / (FOLDS - 1) sentences
FOLD_SENTENCES = 180_000       # sentences the fold taggers train on in all, above that


# ---- stages ---------------------------------------------------------------------------
def _frontend(run: Run) -> dict:
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
    instead of ~26 (bench/journal/12-any-treebank.md, "Fewer jackknife folds for large
    treebanks")."""
    return max(3, min(FOLDS, 1 + FOLD_SENTENCES // max(1, n_sentences)))


def jackknifed(options: BuildOptions) -> bool:
    """Whether the transition parser trains on jackknifed tags (else on the gold ones,
    as the graph parser always does: `graph_stage.py`)."""
    return options.jackknife is None or options.jackknife > 1


def _jackknife(run: Run) -> dict:
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


def _tagged_train(run: Run) -> Path:
    if jackknifed(run.options):
        return run.work / "train.jackknifed.conllu"
    return run.train


def auto_analysers(n_words: int) -> int:
    """Neural analysers to average when `--analysers` is 0: two below ENSEMBLE_WORDS
    training words, where the pair beats its first member by 0.7 / 0.9 UAS / LAS at 75k
    words and 1.6 / 2.0 at 22k (bench/journal/12-any-treebank.md, "Two analysers up to
    100,000 training words"); one above, where the gain shrinks (en_ewt, 205k: 0.2 /
    0.4) and en_ewt's 1,500 tokens/s would not hold. The stage sees the same number of words in all
    (`neural.train.auto_epochs`): one analyser twice as many as each of a pair, so the
    stage takes about 45 minutes on 2 cores with bfloat16 products at any size from
    5,000 words up (less below, where epochs are capped)."""
    return 2 if n_words < ENSEMBLE_WORDS else 1


def neural_seconds(run: Run, analysers: int) -> float | None:
    """Seconds each analyser may train (compiling and dev evaluations included) for the
    build to end within `time_budget` minutes, or None without one. The stages done so
    far took what they took; the later ones (graph, transition, calibrate) get
    LATER_SHARE of that time, at least LATER_MIN: measured, they took 0.89-0.92x the
    front-end and jackknife on en_ewt and 104-229 s on the three smaller treebanks
    (bench/journal/12-any-treebank.md, "A time budget for the build"). Each analyser's
    process spends ANALYSER_OVERHEAD outside its epochs (vectors, encoding, saving;
    15-30 s measured). The later stages' share is judged by the stages before the
    analysers' (front-end, jackknife), whenever it is asked. The neural stage counts the
    contextual analyser, while its stage is still to run, as one analyser more among
    which the time left is shared; calibration then runs twice (CALIBRATE_TWICE). Where
    the dev split chooses the graph parser's parts, the graph stage trains two or three
    more models: measured, they took 1.05x the front-end and jackknife on en_ewt (370 s)
    and 170 s on tr_imst (GRAPH_CANDIDATES_SHARE, GRAPH_CANDIDATES_MIN)."""
    if not run.options.time_budget:
        return None
    done = run.state.get("done", {})
    before = sum(v["seconds"] for v in done.values())
    early = sum(v["seconds"] for k, v in done.items() if k not in ("neural", "contextual"))
    o = run.options
    later = max(LATER_MIN, LATER_SHARE * early) * (CALIBRATE_TWICE if o.encoder else 1.0)
    if o.tensor_rank is None or o.global_features is None:
        later += max(GRAPH_CANDIDATES_MIN, GRAPH_CANDIDATES_SHARE * early)
    left = 60 * o.time_budget - before - later
    return max(0.0, left / analysers - ANALYSER_OVERHEAD)


def contextual_pending(run: Run) -> int:
    """1 while the contextual stage is still to run in this build, else 0."""
    o = run.options
    return int(bool(o.encoder) and "contextual" not in o.skip and not run.done("contextual"))


def _neural(run: Run) -> dict:
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
    spawn(train_neural, args, stage, out / "analyser.json", tunables=HUGE_PAGES)


CONTEXTUAL_ANALYSERS_WORDS = 2   # the contextual analyser's epochs: as each of a pair's


def _contextual(run: Run) -> dict:
    """One analyser that also reads the encoder's states (frozen, computed once into
    .build/contextual), in a process of its own as the neural stage's are. It sees as
    many words as each analyser of a pair (`auto_epochs(n, 2)`): it learns faster."""
    from models.neural.stored import share_vectors
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


def _graph(run: Run) -> dict:
    """`graph_stage.py`: on the gold training tags, with the parts the dev split keeps."""
    from models.graph.train import TrainConfig

    from .children import retagged
    from .graph_stage import graph_stage

    o = run.options
    shared = run.out / "frontend" / "tagger"        # one copy of the clusters, the tagger's
    cfg = TrainConfig(order=o.order, seed=o.seed, jackknife=0,
                      word_classes=str(shared) if o.word_classes else "",
                      word_classes_at="../frontend/tagger" if o.word_classes else "")
    if o.graph_epochs:
        cfg.epochs = cfg.pruner_epochs = cfg.label_epochs = o.graph_epochs
    dev_tagged = retagged(run.out / "frontend", list(read_conllu(run.dev)))
    info = graph_stage(run.train, run.dev, dev_tagged, run.out / "graph", run.work / "graph",
                       cfg, o.tensor_rank, o.global_features if o.order > 1 else False)
    return {"order": o.order, **info}


def _transition(run: Run) -> dict:
    """In a process of its own, as the neural stage: the two dense tables it trains (up
    to 0.5 GB the pair, `transition.train.MAX_CELLS`) and its examples would come on top
    of what the build process keeps from the earlier stages (~1.1 GB). With jackknifed
    tags it trains twice, on them and on the gold ones, and keeps the model with the
    higher greedy dev UAS + LAS on the front-end's tags. On those tags, at beam 16,
    jackknifed ones were worth +0.28 / +0.36 on en_ewt and +0.45 / +0.55 on hu_szeged,
    gold ones +0.70 / +0.30 on tr_imst (bench/RESULTS.md, "The graph model's parts")."""
    from models.transition.model import load
    from models.transition.train import _encode, evaluate

    from .children import retagged

    out = run.out / "transition"
    runs = [("gold", run.train, run.work / "transition-gold")]
    if jackknifed(run.options):
        runs.insert(0, ("jackknifed", _tagged_train(run), run.work / "transition"))
    dev = retagged(run.out / "frontend", list(read_conllu(run.dev)))
    attrs = [_encode(s) for s in dev]
    scores, dirs = {}, {}
    for tags, train_file, work in runs:
        dirs[tags] = out if tags == runs[0][0] else work / "model"
        args = (str(train_file), str(run.dev), str(dirs[tags]), str(work),
                str(run.out / "frontend"), run.options.transition_epochs, run.options.seed)
        spawn(train_transition, args, "transition", dirs[tags] / "model.json")
        uas, las, _, _ = evaluate(load(str(dirs[tags])), dev, attrs, beam=1)
        scores[tags] = [round(uas, 2), round(las, 2)]
    kept = max(scores, key=lambda t: sum(scores[t]))
    if dirs[kept] != out:
        shutil.rmtree(out)
        shutil.copytree(dirs[kept], out)
    meta = json.loads((out / "model.json").read_text(encoding="utf-8"))["training"]
    return {"best_epoch": meta.get("best_epoch"), "training_tags": kept,
            "dev_uas_las_greedy": scores}


def _calibrate(run: Run) -> dict:
    from .calibrate import calibrate

    _write_pipeline(run, {})
    settings = calibrate(run.out, run.dev)
    if (run.out / "contextual").is_dir():
        settings["contextual_settings"] = calibrate(run.out, run.dev, contextual=True)
    _write_pipeline(run, settings)
    return settings


def _write_pipeline(run: Run, settings: dict) -> None:
    from models.serve.pipeline_config import FORMAT_VERSION

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
            "contextual": _contextual, "graph": _graph, "transition": _transition,
            "calibrate": _calibrate}


def build_model(train: str | Path, dev: str | Path | None, out: str | Path,
                options: BuildOptions | None = None) -> Path:
    """Train every stage not yet done into out; return out."""
    opts = options or BuildOptions()
    run = prepare(Path(train), Path(dev) if dev else None, Path(out), opts)
    todo = [s for s in STAGES if s not in opts.skip
            and not (s == "jackknife" and (not jackknifed(opts) or "transition" in opts.skip))
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

"""The build's child processes: each long stage (the neural analysers, the transition
parser) trains in a spawned process of its own, with the environment it needs (glibc's
huge pages, JAX's compilation cache), and ends with the build however that ends.

The functions `train_neural` and `train_transition` are those processes' entry points.
"""
from __future__ import annotations

import contextlib
import logging
from dataclasses import replace
from pathlib import Path

from models.conllu import Sentence, read_conllu
from models.errors import ModelError

logger = logging.getLogger(__name__)

JAX_CACHE = "jax-cache"           # under .build: the neural stage's compiled programs
# glibc (2.35 on) asks for transparent huge pages for its large blocks in the neural
# stage's process: XLA maps each training step's buffers afresh, and they fault in
# 2 MB pages instead of 4 kB ones: 13x fewer faults, a step 1.07-1.1x faster
# (bench/journal/12-any-treebank.md, "Huge pages, and bfloat16 on AVX512-BF16"); an
# older glibc ignores the setting.
HUGE_PAGES = "glibc.malloc.hugetlb=1"


def child_start() -> None:
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


def spawn(target, args: tuple, stage: str, result: Path, tunables: str = "") -> None:
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


def use_compilation_cache(directory: str) -> None:
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


def train_neural(train: str, dev: str, out: str, work: str, vectors_path: str,
                  options: dict, frontend: str, compiled: str,
                  seconds: float | None = None, encoder: str = "") -> None:
    """The neural stage's process: train the analyser (within `seconds` of training, if
    given; reading the named encoder's states, if given) and save it to out."""
    child_start()
    use_compilation_cache(compiled)
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
    analyser = train_analyser(words(Path(train)), words(Path(dev)), cfg,
                              classes=linear.classes, vectors=vectors, checkpoint_dir=work,
                              seconds=seconds, context=context)
    analyser.save(out)


def words(path: Path) -> list[list[tuple]]:
    return [[(w.form, w.upos, w.xpos, w.feats, w.head, w.deprel) for w in s.words]
            for s in read_conllu(path)]


def train_transition(train: str, dev: str, out: str, work: str, frontend: str, epochs: int,
                      seed: int) -> None:
    """The transition stage's process: train on train's tags (jackknifed or gold),
    select on dev tagged by the front-end, save to out."""
    child_start()
    from models.transition.train import train as train_transition

    train_transition(train, retagged(Path(frontend), list(read_conllu(dev))), out,
                     n_rows=None, epochs=epochs, alpha=0.05, prune=0.025, bootstrap_rounds=2,
                     bootstrap_epochs=4, seed=seed, command="deptree train (transition stage)",
                     checkpoint_dir=work)


def retagged(fe: Path, sents: list[Sentence]) -> list[Sentence]:
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

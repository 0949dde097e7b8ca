"""Training of the graph parser: PA/MIRA with cost-augmented decoding.

Zhang et al. (2014, Section 4): online passive-aggressive updates with
parameter averaging, decoding each training sentence with a Hamming-cost
augmented score (exact MST for a first-order model, randomized greedy
hill-climbing otherwise). A higher-order model first trains a first-order
model that prunes its head candidates; the gold head is always kept during
training. A second stage trains the labeler. Each epoch ends in a checkpoint
so an interrupted run resumes where it stopped.
"""
from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..conllu import Sentence, read_conllu, validate_tree
from ..errors import ModelError
from ..progress import progress_bar
from ..text.wordclasses import WordClasses
from .checkpoint import Checkpoint
from .decode_greedy import greedy_search
from .decode_mst import decode_mst
from .encode import EncodedSentence, encode
from .global_features import global_feature_ids, global_score
from .labeler import LABEL_FEATURE_SET, perceptron_sentence
from .model import GraphModel
from .online import averaged, feature_difference, pa_update
from .prune import all_arcs, fit_temperature, prune, pruning_recall
from .rng import new_state
from .scoring import Scoring, arc_scores, new_memo, tree_features, tree_score
from .search_space import build_search_space
from .tensor import TensorArcs
from .tensor_online import TensorState

logger = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    order: int = 3
    epochs: int = 6
    pruner_epochs: int = 6
    label_epochs: int = 6
    C: float = 0.01       # PA-I aggressiveness (RBGParser's default)
    log2_size: int = 25
    pruner_log2_size: int = 24
    label_log2_size: int = 22
    train_restarts: int = 12
    train_converge: int = 3
    prune_threshold: float = 0.005
    prune_max_heads: int = 20
    seed: int = 0
    dev_restarts: int = 20
    dev_converge: int = 5
    jackknife: int = 10       # k-fold jackknifed training tags; 0 = gold tags
    mixed_tags: bool = False  # with jackknife: every sentence twice, gold and jackknifed tags
    word_classes: str = ""    # Brown clusters for the arc templates: "" none,
                              # "spacy-lookups-data", or a directory with wordclasses.npz
    word_classes_at: str = ""  # save a reference to this directory (relative to the
                               # model's) instead of a copy of the clusters
    tensor_rank: int = 0       # rank of the main model's low-rank tensor arc scores
                               # (Lei et al. 2014; 0: none)
    tensor_log2_size: int = 17  # log2 of the hashed rows of its word features
    tensor_gamma: float = 0.3   # the tensor's scores are weighted 1 - gamma
    tensor_init: float = 0.1    # deviation of the random start of U, V, W
    global_features: bool = False  # the main model scores `global_features` (order > 1)


@dataclass
class Example:
    enc: EncodedSentence
    heads: np.ndarray     # int64 (n+1), heads[0] = -1
    labels: np.ndarray    # int64 (n+1) label ids


def load_word_classes(source: str) -> WordClasses | None:
    """The clusters `TrainConfig.word_classes` names (None for ""); spaCy's tables
    need the training extra (ModuleNotFoundError names it otherwise)."""
    if not source:
        return None
    if source == "spacy-lookups-data":
        return WordClasses.from_spacy_lookups()
    try:
        return WordClasses.load(source)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"no word classes in {source}: {exc}") from exc


def read_examples(path: str | Path, labels: dict[str, int] | None = None,
                  grow_labels: bool = True, jackknife: int = 0, seed: int = 0,
                  word_classes: WordClasses | None = None, mixed: bool = False
                  ) -> tuple[list[Example], dict[str, int]]:
    """Encode the gold trees of a CoNLL-U file (invalid trees raise TreeError).

    jackknife = k > 1 replaces UPOS/XPOS by k-fold jackknifed tagger predictions
    (each fold tagged by a tagger trained on the other folds), so the parser
    trains on tags with the errors it will see at test time (lemmas stay gold).
    mixed (with jackknife): every sentence twice, first all with their gold tags,
    then all with jackknifed ones, so the model learns both tag profiles.
    """
    labels = dict(labels or {"root": 0})
    sents = list(read_conllu(path))
    for sent in sents:
        validate_tree(sent)
    gold: list[Example] = []
    if jackknife > 1 and mixed:
        gold = [example_of(sent, labels, grow_labels, word_classes) for sent in sents]
    if jackknife > 1:
        from ..text.jackknife import retag_jackknifed

        t0 = time.time()
        upos = retag_jackknifed(sents, jackknife, seed)
        logger.info("%d-fold jackknifed tags in %.0fs (UPOS %.2f%% correct)", jackknife,
                    time.time() - t0, upos)
    out = [example_of(sent, labels, grow_labels, word_classes) for sent in sents]
    return gold + out, labels


def example_of(sent: Sentence, labels: dict[str, int], grow: bool,
               word_classes: WordClasses | None = None) -> Example:
    w = sent.words
    forms = [x.form for x in w]
    enc = encode(forms, [x.lemma for x in w], [x.upos for x in w], [x.xpos for x in w],
                 None if word_classes is None else word_classes.clusters(forms))
    lab = np.zeros(len(w) + 1, dtype=np.int64)
    for i, x in enumerate(w, 1):
        if x.deprel not in labels and grow:
            labels[x.deprel] = len(labels)
        lab[i] = labels.get(x.deprel, 0)
    return Example(enc, sent.heads().astype(np.int64), lab)


def _cost_augmented(S: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """S plus a Hamming cost of 1 on every arc that is not gold."""
    aug = S + 1.0
    aug[gold[1:], np.arange(1, gold.shape[0])] -= 1.0
    return aug


def _train_arcs(examples: list[Example], cfg: TrainConfig, order: int, log2: int,
                allowed_of: Callable[[int], np.ndarray] | None, ckpt: Checkpoint,
                dev_eval: Callable[[np.ndarray, TensorArcs | None], float] | None,
                epochs: int, times: list[float] | None = None,
                tensor: TensorState | None = None, glob: bool = False
                ) -> tuple[np.ndarray, TensorArcs | None]:
    """Generic PA loop; returns the averaged weights and tensor (None without one;
    `tensor_online` for the joint step); glob: the trees' global features are scored
    and learnt too. Appends each epoch's seconds to `times` (kept in model.json: an
    epoch far slower than the others shows there)."""
    size = 1 << log2
    mask = np.uint64(size - 1)
    w, u, step, start = ckpt.resume(size, tensor)

    def features(heads: np.ndarray, enc: EncodedSentence) -> np.ndarray:
        f = tree_features(heads, order, enc.attrs, enc.upos_prefix, mask)
        return np.concatenate([f, global_feature_ids(heads, enc.attrs, mask)]) if glob else f

    def score(heads: np.ndarray, S: np.ndarray, enc: EncodedSentence, memo) -> float:
        s = tree_score(heads, Scoring(order, S, enc.attrs, enc.upos_prefix, w, mask, *memo))
        return s + global_score(heads, enc.attrs, w, mask) if glob else s

    active = np.zeros(size, dtype=np.bool_)
    for ex in examples:
        active[features(ex.heads, ex.enc)] = True
    logger.info("order-%d features: %d slots of %d used by gold trees (%.1f%%)", order,
                int(active.sum()), size, 100.0 * active.sum() / size)
    rng = np.random.default_rng(cfg.seed)
    perms = [rng.permutation(len(examples)) for _ in range(epochs)]
    bar = progress_bar(epochs * len(examples), f"order-{order} model", "sent",
                       initial=start * len(examples))
    for epoch in range(start, epochs):
        t0 = time.time()
        correct = total = 0
        for k, i in enumerate(perms[epoch]):
            ex = examples[i]
            gold = ex.heads
            allowed = allowed_of(i) if allowed_of else all_arcs(ex.enc.n)
            S = arc_scores(ex.enc.attrs, ex.enc.upos_prefix, w, mask, allowed)
            scored = None if tensor is None else tensor.add_scores(ex.enc.attrs, allowed, S)
            aug = _cost_augmented(S, gold)
            memo = new_memo(ex.enc.n)
            if order == 1:
                pred = decode_mst(aug)
            else:
                space = build_search_space(allowed, aug, "first_order")
                res = greedy_search(space.cand, space.ncand, space.cdf, space.root_cdf,
                                    space.root_ok, order, aug, ex.enc.attrs, ex.enc.upos_prefix,
                                    w, int(mask), memo, seed_state=new_state(cfg.seed + k),
                                    restarts=cfg.train_restarts, converge=cfg.train_converge,
                                    start=decode_mst(aug), global_features=glob)
                pred = res.heads
            ham = int((pred[1:] != gold[1:]).sum())
            correct += gold.shape[0] - 1 - ham
            total += gold.shape[0] - 1
            if ham:
                loss = score(pred, S, ex.enc, memo) - score(gold, S, ex.enc, memo) + ham
                idx, val = feature_difference(features(gold, ex.enc), features(pred, ex.enc))
                if tensor is None:
                    pa_update(w, u, step, idx, val, loss, cfg.C, active)
                else:
                    tensor.pa_step(scored, gold, pred, loss, cfg.C, w, u, step, idx, val,
                                   active)
            step += 1.0
            bar.update(1)
            if (k + 1) % 500 == 0 or k + 1 == len(examples):
                bar.set_postfix(epoch=epoch + 1, train_uas=f"{100.0 * correct / max(1, total):.2f}")
        ckpt.save(w, u, step, epoch, tensor)
        if times is not None:
            times.append(round(time.time() - t0, 1))
        msg = (f"order-{order} epoch {epoch + 1}/{epochs}: {time.time() - t0:.0f}s, "
               f"{len(examples) / (time.time() - t0):.0f} sent/s, "
               f"train UAS {100.0 * correct / max(1, total):.2f}")
        if dev_eval is not None:
            msg += f", dev UAS {dev_eval(*_averaged(w, u, step, tensor)):.2f}"
        logger.info(msg)
    bar.close()
    return _averaged(w, u, step, tensor)


def _averaged(w, u, step, tensor: TensorState | None) -> tuple[np.ndarray, TensorArcs | None]:
    return averaged(w, u, step), None if tensor is None else tensor.averaged(step)


def _train_labeler(examples: list[Example], n_labels: int, cfg: TrainConfig,
                   ckpt: Checkpoint, times: list[float] | None = None) -> np.ndarray:
    size = 1 << cfg.label_log2_size
    mask = np.uint64(size - 1)
    w, u, step, start = ckpt.resume(size)
    rng = np.random.default_rng(cfg.seed + 1)
    perms = [rng.permutation(len(examples)) for _ in range(cfg.label_epochs)]
    for epoch in range(start, cfg.label_epochs):
        t0 = time.time()
        correct = total = 0
        for i in perms[epoch]:
            ex = examples[i]
            correct += perceptron_sentence(ex.enc.attrs, ex.heads, ex.labels, w, u, step, mask,
                                           n_labels, 0)
            total += ex.heads.shape[0] - 1
            step += 1.0
        ckpt.save(w, u, step, epoch)
        if times is not None:
            times.append(round(time.time() - t0, 1))
        logger.info("labeler epoch %d/%d: %.0fs, train label accuracy %.2f", epoch + 1,
                    cfg.label_epochs, time.time() - t0, 100.0 * correct / max(1, total))
    return averaged(w, u, step)


def _dev_uas(model: GraphModel, dev: list[Example], decoder: str, budget: dict) -> float:
    correct = total = 0
    for ex in dev:
        heads = model.decode(ex.enc, decoder, budget).heads
        correct += int((heads[1:] == ex.heads[1:]).sum())
        total += ex.heads.shape[0] - 1
    return 100.0 * correct / max(1, total)


def _file_hash(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def train(train_path: str | Path, out_dir: str | Path, dev_path: str | Path | None = None,
          cfg: TrainConfig | None = None, command: str = "",
          checkpoint_dir: str | Path | None = None) -> GraphModel:
    """Train a graph model from a CoNLL-U file and save it to out_dir; checkpoints go
    to checkpoint_dir (default out_dir/checkpoints)."""
    cfg = cfg or TrainConfig()
    if cfg.tensor_rank < 0 or not 0.0 <= cfg.tensor_gamma < 1.0:
        raise ModelError("give a tensor rank of 0 (none) or more, and 0 <= gamma < 1")
    out = Path(out_dir)
    ckdir = Path(checkpoint_dir) if checkpoint_dir else out / "checkpoints"
    ckdir.mkdir(parents=True, exist_ok=True)
    t_start = time.time()
    word_classes = load_word_classes(cfg.word_classes)
    examples, label_ids = read_examples(train_path, jackknife=cfg.jackknife, seed=cfg.seed,
                                        word_classes=word_classes, mixed=cfg.mixed_tags)
    dev = read_examples(dev_path, label_ids, grow_labels=False,
                        word_classes=word_classes)[0] if dev_path else []
    labels = [lab for lab, _ in sorted(label_ids.items(), key=lambda kv: kv[1])]
    logger.info("%d training sentences, %d labels", len(examples), len(labels))
    empty_labels = np.zeros(1 << 4, dtype=np.float32)

    def first_order_dev(w: np.ndarray, tensor: TensorArcs | None) -> float:
        m = GraphModel(1, w, labels, empty_labels, tensor=tensor)
        return _dev_uas(m, dev, "mst", {})

    # the main model's checkpoint names its extra parts: one of other parts is not resumed
    main_parts = (f"-tensor{cfg.tensor_rank}" if cfg.tensor_rank else "") + (
        "-global" if cfg.global_features and cfg.order > 1 else "")

    def tensor_of(order: int) -> TensorState | None:   # the main model's only
        if not cfg.tensor_rank or order != cfg.order:
            return None
        return TensorState(cfg.tensor_rank, cfg.tensor_log2_size, cfg.tensor_gamma,
                           (ex.enc.attrs for ex in examples), cfg.seed, cfg.tensor_init)

    times: dict[str, list[float]] = {"order-1": [], f"order-{cfg.order}": [], "labeler": []}
    pruner, tensor = _train_arcs(
        examples, cfg, 1, cfg.pruner_log2_size if cfg.order > 1 else cfg.log2_size, None,
        Checkpoint(ckdir, "order1" + (main_parts if cfg.order == 1 else "")),
        first_order_dev if dev else None,
        cfg.pruner_epochs if cfg.order > 1 else cfg.epochs, times["order-1"], tensor_of(1))
    temperature = 1.0
    if cfg.order == 1:
        weights, pruner = pruner, None
    else:
        pmask = np.uint64(pruner.shape[0] - 1)
        columns = []
        for ex in (dev or examples[:2000]):
            S1 = arc_scores(ex.enc.attrs, ex.enc.upos_prefix, pruner, pmask, all_arcs(ex.enc.n))
            columns.extend((S1[:, m], int(ex.heads[m])) for m in range(1, ex.enc.n + 1))
        temperature = fit_temperature(columns)
        logger.info("pruner temperature %.3f (fitted on %s)", temperature,
                    "dev" if dev else "train")
        allowed = []
        kept = tot = 0
        for ex in examples:
            S1 = arc_scores(ex.enc.attrs, ex.enc.upos_prefix, pruner, pmask, all_arcs(ex.enc.n))
            a = prune(S1 / temperature, cfg.prune_threshold, cfg.prune_max_heads)
            k, t = pruning_recall(a, ex.heads)
            kept += k
            tot += t
            a[ex.heads[1:], np.arange(1, ex.heads.shape[0])] = True
            allowed.append(a)
        logger.info("pruning recall on train %.2f%%, %.2f heads/word", 100.0 * kept / tot,
                    sum(int(a[:, 1:].sum()) for a in allowed) / tot)

        def higher_dev(w: np.ndarray, tensor: TensorArcs | None) -> float:
            m = GraphModel(cfg.order, w, labels, empty_labels, pruner=pruner,
                           prune_threshold=cfg.prune_threshold,
                           prune_max_heads=cfg.prune_max_heads, prune_temperature=temperature,
                           tensor=tensor, global_features=cfg.global_features)
            return _dev_uas(m, dev, "greedy",
                            {"restarts": cfg.dev_restarts, "converge": cfg.dev_converge})

        ckpt = Checkpoint(ckdir, f"order{cfg.order}" + main_parts)
        weights, tensor = _train_arcs(examples, cfg, cfg.order, cfg.log2_size,
                                      allowed.__getitem__,
                                      ckpt, higher_dev if dev else None, cfg.epochs,
                                      times[f"order-{cfg.order}"], tensor_of(cfg.order),
                                      cfg.global_features)
    label_weights = _train_labeler(examples, len(labels), cfg,
                                   Checkpoint(ckdir, f"labeler-{LABEL_FEATURE_SET}"),
                                   times["labeler"])
    model = GraphModel(cfg.order, weights, labels, label_weights, pruner=pruner,
                       prune_threshold=cfg.prune_threshold, prune_max_heads=cfg.prune_max_heads,
                       prune_temperature=temperature if cfg.order > 1 else 1.0,
                       word_classes=word_classes,
                       word_classes_at=cfg.word_classes_at, tensor=tensor,
                       global_features=cfg.global_features and cfg.order > 1)
    model.save(out, {
        "train_config": asdict(cfg), "train_data": str(train_path),
        "train_data_sha256": _file_hash(train_path), "train_command": command,
        "train_seconds": round(time.time() - t_start, 1),
        "epoch_seconds": times,       # this run's (a resumed run's earlier ones are not here)
    })
    logger.info("saved %s (%.0fs)", out, time.time() - t_start)
    return model


def relabel(model_dir: str | Path, train_path: str | Path, out_dir: str | Path,
            cfg: TrainConfig | None = None, command: str = "") -> GraphModel:
    """Retrain only the labeler of the graph model in model_dir on the gold trees of
    train_path and save the model to out_dir: arcs, pruner and labels are kept, so
    every tree (and UAS) stays the same. For a model whose labeler predates the
    current `LABEL_FEATURE_SET`."""
    cfg = cfg or TrainConfig()
    t_start = time.time()
    model = GraphModel.load(model_dir, labeler=False)
    model.save_rel = 0.0  # the arcs were pruned when first saved: keep them bit for bit
    label_ids = {lab: i for i, lab in enumerate(model.labels)}
    examples, grown = read_examples(train_path, label_ids, word_classes=model.word_classes)
    if len(grown) != len(label_ids):
        raise ModelError(f"{train_path} has relations the model in {model_dir} does not "
                         f"know: {sorted(set(grown) - set(label_ids))}")
    out = Path(out_dir)
    ckdir = out / "checkpoints"
    ckdir.mkdir(parents=True, exist_ok=True)
    model.label_weights = _train_labeler(examples, len(model.labels), cfg,
                                         Checkpoint(ckdir, f"labeler-{LABEL_FEATURE_SET}"))
    model.save(out, {"labeler_training": {
        "label_feature_set": LABEL_FEATURE_SET, "label_epochs": cfg.label_epochs,
        "label_log2_size": cfg.label_log2_size, "seed": cfg.seed,
        "train_data": str(train_path), "train_data_sha256": _file_hash(train_path),
        "command": command, "seconds": round(time.time() - t_start, 1)}})
    logger.info("saved %s with a retrained labeler (%.0fs)", out, time.time() - t_start)
    return model

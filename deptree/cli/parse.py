"""`deptree parse`: stdin (CoNLL-U, text or tokens) to CoNLL-U on stdout, with one flag
per budget field of the decoders; the reading and writing is `parse_run.py`'s."""
from __future__ import annotations

import argparse
import sys


def add_budget_flags(p: argparse.ArgumentParser) -> None:
    """One flag per budget field of the decoders (`models/decoder_registry.py`;
    `--deadline-ms` for `deadline_ms`), typed, bounded and documented by their specs; a
    field several decoders share is one flag. Imports the decoders: only `deptree
    parse` pays it."""
    from models.decoder_registry import DECODERS
    from models.serve.parse_policy import ANALYSERS, neural_field

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


def add_parse(sub: argparse._SubParsersAction, budget_flags: bool = True) -> None:
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
    from .parse_run import parse_stream

    budget = {k: getattr(args, k) for k in args.budget_fields if getattr(args, k) is not None}
    source = open(args.file, encoding="utf-8") if args.file else sys.stdin
    try:
        parse_stream(source, sys.stdout, model=args.model, decoder=args.decoder, budget=budget,
                     input_format=args.input, gold_tags=args.gold_tags, tagger=args.tagger)
    finally:
        if args.file:
            source.close()
    return 0

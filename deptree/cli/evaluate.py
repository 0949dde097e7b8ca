"""`deptree evaluate`: the CoNLL 2018 scorer's figures of a prediction file
(`models/build/evaluate.py`)."""
from __future__ import annotations

import argparse
import sys


def add_evaluate(sub: argparse._SubParsersAction) -> None:
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
    from models.build.evaluate import evaluate_files, format_json, format_report

    report = evaluate_files(args.gold, args.pred)
    if args.json:
        sys.stdout.write(format_json(report))
    else:
        sys.stdout.write(format_report(report, counts=args.counts))
    return 0

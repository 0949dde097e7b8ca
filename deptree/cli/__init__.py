"""The `deptree` console script: a thin argparse front over plain functions.

Each subcommand parses its flags and calls one function of a layer: the building
layer (`models/build/`: `train`, `evaluate`, `package`), the serving layer (`parse`),
the gateway (`app/serve_cli.py`: `serve`, `worker`). No algorithm lives here
(spaCy's `train_cli` -> `train()` split). One module per group of commands.
"""
from __future__ import annotations

import argparse
import logging
import sys

from models.errors import DeptreeError
from worker.logsafe import configure_logging

from .evaluate import add_evaluate
from .parse import add_parse
from .train import add_build, add_train_frontend, add_train_graph

logger = logging.getLogger(__name__)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The CLI; the budget flags of `parse` (they import the decoders) only when `argv`
    (default: sys.argv) runs `parse`, so that `deptree serve` imports no kernel."""
    parser = argparse.ArgumentParser(prog="deptree", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    add_evaluate(sub)
    add_build(sub)
    add_train_graph(sub)
    add_train_frontend(sub)
    add_parse(sub, "parse" in (sys.argv[1:] if argv is None else argv))
    from models.build.package import add_package

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


"""The treebanks of the cross-language benchmark and their train/dev files.

Every treebank in `../shared/data` with a train file. nl_lassysmall has no dev
file, so the benchmark keeps a fixed slice of its train for dev: every 5th
sentence (file order, 0-based index % 5 == 4; 308 sentences), and trains on the
other 1,234. Both parsers (UDPipe and deptree) get the same two files.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
WORK = ROOT / "runs" / "treebanks"
RESULTS = ROOT / "bench" / "results" / "treebanks"
TREEBANKS = ("en_ewt", "nl_lassysmall", "tr_imst", "hu_szeged")
NL_DEV_EVERY = 5


def write_result(res: dict, name: str, out: str | None = None) -> None:
    """Write a benchmark's result as JSON to `out`, or RESULTS/`name`, and echo it."""
    dest = Path(out) if out else RESULTS / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(res, indent=1) + "\n")
    sys.stdout.write(json.dumps(res, indent=1) + "\n")


def _blocks(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [b.strip("\n") + "\n" for b in text.split("\n\n") if b.strip()]


def split_files(name: str) -> tuple[Path, Path]:
    """(train, dev) CoNLL-U of treebank `name`; nl_lassysmall's are written once
    under runs/treebanks/ from its train file."""
    d = DATA / name
    if (d / "dev.conllu").exists():
        return d / "train.conllu", d / "dev.conllu"
    out = WORK / name
    train, dev = out / "train.conllu", out / "dev.conllu"
    if not dev.exists():
        out.mkdir(parents=True, exist_ok=True)
        blocks = _blocks(d / "train.conllu")
        keep = [b for i, b in enumerate(blocks) if i % NL_DEV_EVERY != NL_DEV_EVERY - 1]
        held = [b for i, b in enumerate(blocks) if i % NL_DEV_EVERY == NL_DEV_EVERY - 1]
        train.write_text("\n".join(keep) + "\n", encoding="utf-8")
        dev.write_text("\n".join(held) + "\n", encoding="utf-8")
    return train, dev

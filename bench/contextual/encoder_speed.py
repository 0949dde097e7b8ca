"""Words per CPU-second of the contextual encoder's first layers on en_ewt dev.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/contextual/encoder_speed.py 5 [SENTENCES]

Tokenizing, the encoder's layers 1..N and pooling each word's pieces, over the first
SENTENCES (600) sentences of en_ewt dev, after a warm-up of 20; process CPU time, so
other jobs' load counts little.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from models.conllu import read_conllu  # noqa: E402
from models.contextual.features import ContextualFeatures  # noqa: E402
from models.contextual.source import EncoderSpec  # noqa: E402

DEV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "en_ewt" / "dev.conllu"


def main() -> None:
    depth = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 600
    sents = [[w.form for w in s.words] for s in read_conllu(DEV)][:count]
    cf = ContextualFeatures(EncoderSpec.new(layers=tuple(range(1, depth + 1))))
    cf.sentences(sents[:20])
    t = time.process_time()
    cf.sentences(sents)
    dt = time.process_time() - t
    n = sum(map(len, sents))
    print(f"{depth} layers: {n} words, {n / dt:.0f} words per CPU-second")


if __name__ == "__main__":
    main()

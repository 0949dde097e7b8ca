"""Image build step: parse one sentence with every registered decoder of every model.

Run with NUMBA_CACHE_DIR set; the @njit(cache=True) kernels compile once here and
load from the cache in every container. Uses the same entry point as `deptree parse`.
"""
from __future__ import annotations

import io
import logging
import os
import sys
import time

from deptree.cli.parse_run import parse_stream
from models.serve.pipeline import Pipeline

logger = logging.getLogger("warm_numba")


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    models = [m for m in os.environ.get("DEPTREE_MODELS", "en_ewt").split(",") if m]
    for model in models:
        for decoder in Pipeline.load(model).decoders():
            t0 = time.perf_counter()
            parse_stream(io.StringIO("The cat sat on the mat .\n"), io.StringIO(), model=model,
                         decoder=decoder, budget={}, input_format="tokens")
            logger.info("%s/%s warm in %.1f s", model, decoder, time.perf_counter() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

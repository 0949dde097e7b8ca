"""Progress bars of the training stages: tqdm on stderr, with rate and ETA.

On a terminal the bar redraws every second; into a log file (not a TTY) it writes a
line every 30 s, so a long stage still shows that it moves and when it will end.
"""
from __future__ import annotations

import sys

from tqdm import tqdm


def progress_bar(total: int, desc: str, unit: str = "it", initial: int = 0) -> tqdm:
    tty = sys.stderr.isatty()
    return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=sys.stderr,
                mininterval=1.0 if tty else 30.0, dynamic_ncols=tty, leave=True,
                smoothing=0.1)

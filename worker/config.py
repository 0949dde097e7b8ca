"""What a worker process needs to know: which models, where, and when to recycle.

A plain dataclass (no pydantic, no `app/` import) so that the gateway can hand it
to a spawned process and `deptree worker` can build it from flags.
"""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field

logger = logging.getLogger(__name__)


@dataclass
class WorkerConfig:
    models: list[str] = field(default_factory=lambda: ["en_ewt"])
    model_dirs: list[str] = field(default_factory=list)
    warm_up: bool = True
    max_requests: int = 0        # recycle after this many jobs; 0 = never
    max_rss_mb: float = 0.0      # recycle above this resident set size; 0 = never

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> WorkerConfig:
        return cls(**d)

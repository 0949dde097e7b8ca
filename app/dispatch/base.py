"""The one interface both dispatch backends implement.

`submit(job, timeout)` sends a job (see `worker.protocol`) to some worker and
returns its reply dict, or raises a `ServiceError` (503 when no worker can take
it or the worker died on it, 504 on timeout). `catalogue()` is what the workers
reported about their models (versions, decoders with budget fields and defaults,
labels), which the gateway validates requests against, so a decoder registered in
`models/` reaches the API without a gateway change; each model's `warm` lists the
decoders whose kernels every live worker has compiled (`with_warm`: on a fresh install
the slow ones compile after the worker is ready, `worker/warm.py`).
"""
from __future__ import annotations

import abc
import logging
from typing import Any

from ..errors import ServiceError

logger = logging.getLogger(__name__)


def with_warm(catalogue: dict[str, dict[str, Any]],
              reports: list[dict[str, list[str]] | None]) -> dict[str, dict[str, Any]]:
    """The catalogue with each model's `warm`: its decoders that are warm on every
    worker of `reports` (model -> warm decoders; None, from a worker that does not
    report it, counts as all warm)."""
    out = {}
    for name, info in catalogue.items():
        warm = set(info.get("decoders", {}))
        for rep in reports:
            if rep is not None:
                warm &= set(rep.get(name, ()))
        out[name] = {**info, "warm": sorted(warm)}
    return out


class Dispatcher(abc.ABC):
    backend = "?"

    @abc.abstractmethod
    async def start(self) -> None: ...

    @abc.abstractmethod
    async def stop(self) -> None: ...

    @abc.abstractmethod
    async def submit(self, job: dict[str, Any], timeout: float) -> dict[str, Any]: ...

    @abc.abstractmethod
    def catalogue(self) -> dict[str, dict[str, Any]]: ...

    @abc.abstractmethod
    def status(self) -> dict[str, Any]:
        """{"backend", "workers_up", "workers": [...], "queue_depth", "in_flight", "error"}"""

    def reload(self) -> int:
        """Admin action: replace the workers by fresh ones that load the model files
        again; returns how many are being replaced."""
        raise ServiceError("not_supported", f"the {self.backend} backend cannot reload its"
                           " workers from the gateway; restart the `deptree worker` processes")

    @property
    def ready(self) -> bool:
        st = self.status()
        return st["workers_up"] > 0 and bool(self.catalogue())

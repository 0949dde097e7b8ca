"""What the Python API raises when a parse is refused or fails: one type, whether the
model runs in this process or behind a service, so a program catches it once."""
from __future__ import annotations

from typing import Any

from models.errors import DeptreeError


class ParseError(DeptreeError):
    """A request refused (an unknown decoder, a budget out of bounds, text over a limit)
    or not answered (a deadline, no worker). `code` is the service's error code (as
    docs/api.md names them), `status` the HTTP status where a service answered, else
    None; `limit` and `value` name the bound that was hit, where one was."""

    def __init__(self, code: str, message: str, *, status: int | None = None,
                 limit: str | None = None, value: Any = None,
                 retry_after: int | None = None) -> None:
        super().__init__(f"{message} [{code}]")
        self.code, self.message, self.status = code, message, status
        self.limit, self.value, self.retry_after = limit, value, retry_after

"""One catalogue of every error message deptree raises (spaCy `errors.py`).

Messages live in `Errors`, keyed by a stable code; reading an attribute returns the
message with its code appended, e.g. `Errors.E003` -> "{column} {value!r} is not an
integer [E003]", so the CLI, HTTP responses and logs all quote the same text.
The code goes at the end (spaCy puts it in front) so that a located error still
reads like a compiler message: `dev.conllu:123: HEAD 'x' is not an integer [E003]`.

Exception classes say *what* went wrong (bad file, bad tree, misaligned files, bad
model); every one derives from `DeptreeError`, which the CLI turns into exit code 2.
"""
from __future__ import annotations

import logging
from os import PathLike

logger = logging.getLogger(__name__)


class _ErrorsWithCodes(type):
    """Append "[CODE]" to a message on attribute access (spaCy `ErrorsWithCodes`)."""

    def __getattribute__(cls, code: str) -> str:
        msg = super().__getattribute__(code)
        if code.startswith("_"):
            return msg
        return f"{msg} [{code}]"


class Errors(metaclass=_ErrorsWithCodes):
    # CoNLL-U reading (E001-E019); raised as ConlluError with path and line.
    E001 = "expected 10 tab-separated columns, found {found}"
    E002 = "ID {value!r} is not an integer, a range like '1-2' or an empty node like '1.1'"
    E003 = "{column} {value!r} is not an integer"
    E004 = "{column} {value!r} is not written in canonical form (expected {expected!r})"
    E005 = "word ID {found} out of order: expected {expected}"
    E006 = "HEAD {head} of word {word} is out of range 0..{n}"
    E007 = "empty FORM in word {word}"
    E008 = "sentence has no words (a block needs at least one line with an integer ID)"
    E009 = "cannot read file: {reason}"
    E010 = "not valid UTF-8: {reason}"

    # Gold-tree validation (E020-E029); raised as TreeError with path and line.
    E020 = "word {word} {form!r} has no head (HEAD is '_')"
    E021 = "word {word} {form!r} has HEAD {head}, out of range 0..{n}"
    E022 = "no word is attached to the root (HEAD 0)"
    E023 = "{count} words are attached to the root (HEAD 0): {words}; a tree has exactly one"
    E024 = "cycle: {cycle}"

    # Programming errors on trees (E030-E039); raised as ValueError.
    E030 = "{name} has length {found}, expected {expected} (number of words + 1)"
    E031 = "head {head} of word {word} is out of range 0..{n} (or -1 for none)"

    # Evaluation alignment (E040-E049); raised as AlignmentError (E045: ConlluError).
    # E040-E043 (same sentences and words required) are retired: files now align on text.
    E044 = (
        "gold and prediction hold different texts (spaces ignored), from character {index}:"
        " gold {gold!r} ({gold_where}), prediction {pred!r} ({pred_where})"
    )
    E045 = "FORM {form!r} is only spaces: it has no character to align"

    # Models (E050-E069); raised as ModelError.
    E050 = "cannot load model {path}: {reason}"


def where(path: str | PathLike[str] | None, line_no: int | None) -> str:
    """`path:line` as compilers print it; either part may be missing."""
    name = "<input>" if path is None else str(path)
    return name if line_no is None else f"{name}:{line_no}"


class DeptreeError(Exception):
    """Base of every error deptree reports to a user (CLI exit code 2, HTTP 4xx)."""


class _LocatedError(DeptreeError):
    """An error at a place in a file: str() is `path:line: message`."""

    def __init__(
        self,
        path: str | PathLike[str] | None,
        line_no: int | None,
        message: str,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line_no = line_no
        self.message = message
        super().__init__(f"{where(self.path, line_no)}: {message}")


class ConlluError(_LocatedError):
    """Malformed CoNLL-U: `path`, 1-based `line_no` (None if the file could not be read)."""


class TreeError(_LocatedError):
    """A gold tree that is not a tree: word without head, cycle, no root or two roots."""


class AlignmentError(DeptreeError):
    """Gold and predicted files do not hold the same text (spaces ignored)."""


class ModelError(DeptreeError):
    """A model file that is missing, unreadable or of an unknown format or version."""

"""CoNLL-U reader and writer that round-trips files byte for byte.

A `Sentence` keeps every line of its block: word lines (integer ID) become `Word`
objects, all other lines (comments, multiword tokens "1-2", empty nodes "1.1") are
kept as raw strings, and `lines` records the order. `format_sentence` rebuilds word
lines from the `Word` fields and copies the rest, so a file read and written with
nothing changed comes out identical, with these normalisations (documented, not bugs):

- "\\r\\n" line ends are read as "\\n" and written as "\\n";
- a file that lacks the final blank line (or final newline) gets it on writing;
- runs of several blank lines, or whitespace-only lines, count as one separator;
- a UTF-8 byte-order mark at the start of a file is kept: it is stripped from the
  text and remembered as `bom=True` on the first sentence, and `write_conllu`
  writes it back when the first sentence it writes has `bom` set.

The reader checks what a parser relies on (10 columns, IDs 1..n in order, HEAD an
integer in 0..n or "_", non-empty FORM) and raises `ConlluError` naming file and
line; `validate_tree` additionally checks that a gold annotation is a tree.
Format: https://universaldependencies.org/format.html
"""
from __future__ import annotations

import io
import logging
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO

import numpy as np

from models.errors import ConlluError, Errors, TreeError
from models.tree import find_cycle

logger = logging.getLogger(__name__)

BOM = "\ufeff"
_INT = re.compile(r"-?[0-9]+\Z")
_RANGE = re.compile(r"[1-9][0-9]*-[1-9][0-9]*\Z")
_EMPTY_NODE = re.compile(r"[0-9]+\.[1-9][0-9]*\Z")
_TEXT = re.compile(r"#\s*text\s*=\s?(.*)\Z")

Source = str | os.PathLike[str] | IO[str]


@dataclass(slots=True)
class Word:
    """One syntactic word: a line whose ID is an integer."""

    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    head: int | None  # None when the column is "_"
    deprel: str
    deps: str
    misc: str

    def to_line(self) -> str:
        head = "_" if self.head is None else str(self.head)
        return "\t".join((
            str(self.id), self.form, self.lemma, self.upos, self.xpos, self.feats,
            head, self.deprel, self.deps, self.misc,
        ))


@dataclass(slots=True)
class Sentence:
    """One block of a CoNLL-U file.

    `lines` holds every line of the block in order: an int is an index into `words`,
    a str is a raw line (comment, multiword token, empty node). `start_line` is the
    1-based line number of the block's first line; `path` names the file it came from
    and `bom` marks a byte-order mark before it (both ignored by ==).
    """

    words: list[Word]
    comments: list[str]
    lines: list[int | str]
    start_line: int
    path: str | None = field(default=None, compare=False, repr=False)
    bom: bool = field(default=False, compare=False, repr=False)

    @classmethod
    def from_words(cls, words: list[Word], comments: Sequence[str] = ()) -> Sentence:
        """A new sentence (not read from a file): the comments, then the words."""
        comments = list(comments)
        return cls(words, comments, [*comments, *range(len(words))], start_line=0)

    @property
    def text(self) -> str | None:
        """Value of the "# text = ..." comment, or None."""
        for c in self.comments:
            m = _TEXT.match(c)
            if m:
                return m.group(1)
        return None

    def line_no(self, i: int) -> int:
        """1-based file line of word i (1-based, as in `heads`)."""
        return self.start_line + self.lines.index(i - 1)

    def heads(self) -> np.ndarray:
        """int64 array of length n+1: [-1, head of word 1, ...]; "_" gives -1."""
        out = np.empty(len(self.words) + 1, dtype=np.int64)
        out[0] = -1
        for i, w in enumerate(self.words, 1):
            out[i] = -1 if w.head is None else w.head
        return out

    def deprels(self) -> list[str]:
        """["", deprel of word 1, ...], aligned with `heads()`."""
        return ["", *(w.deprel for w in self.words)]

    def set_tree(self, heads: Sequence[int] | np.ndarray, deprels: Sequence[str] | None) -> None:
        """Fill HEAD and DEPREL of every word from arrays of length n+1 (index 0 ignored).

        A head of -1 writes "_". `deprels=None` leaves DEPREL as it is.
        Raises ValueError on a wrong length or a head outside -1..n.
        """
        n = len(self.words)
        if len(heads) != n + 1:
            raise ValueError(Errors.E030.format(name="heads", found=len(heads), expected=n + 1))
        if deprels is not None and len(deprels) != n + 1:
            raise ValueError(
                Errors.E030.format(name="deprels", found=len(deprels), expected=n + 1)
            )
        new_heads = [int(h) for h in heads[1:]]
        for i, h in enumerate(new_heads, 1):
            if h < -1 or h > n:
                raise ValueError(Errors.E031.format(head=h, word=i, n=n))
        for i, w in enumerate(self.words, 1):
            h = new_heads[i - 1]
            w.head = None if h < 0 else h
            if deprels is not None:
                w.deprel = str(deprels[i])


def _name_of(source: Source, path_name: str | None) -> str:
    if path_name is not None:
        return path_name
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    return str(getattr(source, "name", "<stream>"))


def _lines_of_file(path: str, name: str) -> Iterator[str]:
    """Lines of a file without line ends, decoded one by one to report the bad line."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below, generator
    except OSError as exc:
        raise ConlluError(name, None, Errors.E009.format(reason=exc.strerror or exc)) from exc
    with f:
        for line_no, raw in enumerate(f, 1):
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ConlluError(name, line_no, Errors.E010.format(reason=exc.reason)) from exc


def read_conllu(source: Source, *, path_name: str | None = None) -> Iterator[Sentence]:
    """Sentences of a CoNLL-U file: `source` is a path or an open text file.

    `path_name` is the file name used in error messages (default: the path, or the
    file object's `name`). Raises ConlluError at the first malformed line.
    """
    name = _name_of(source, path_name)
    if isinstance(source, (str, os.PathLike)):
        lines: Iterable[str] = _lines_of_file(os.fspath(source), name)
    else:
        lines = source
    block: list[str] = []
    start = 1
    bom = False
    for line_no, line in enumerate(lines, 1):
        if line_no == 1 and line.startswith(BOM):
            line = line[1:]
            bom = True
        line = line.rstrip("\r\n")
        if line.strip():
            if not block:
                start = line_no
            block.append(line)
        elif block:
            yield _parse_block(block, start, name, bom and start == 1)
            block = []
    if block:
        yield _parse_block(block, start, name, bom and start == 1)


def read_conllu_string(text: str, *, path_name: str = "<string>") -> list[Sentence]:
    """All sentences of CoNLL-U text."""
    return list(read_conllu(io.StringIO(text), path_name=path_name))


def _parse_int(value: str, column: str, name: str, line_no: int) -> int:
    if not _INT.match(value):
        raise ConlluError(name, line_no, Errors.E003.format(column=column, value=value))
    number = int(value)
    if str(number) != value:
        raise ConlluError(
            name, line_no, Errors.E004.format(column=column, value=value, expected=str(number))
        )
    return number


def _parse_block(block: list[str], start: int, name: str, bom: bool) -> Sentence:
    words: list[Word] = []
    comments: list[str] = []
    lines: list[int | str] = []
    for offset, line in enumerate(block):
        line_no = start + offset
        if line.startswith("#"):
            comments.append(line)
            lines.append(line)
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise ConlluError(name, line_no, Errors.E001.format(found=len(cols)))
        wid = cols[0]
        if _RANGE.match(wid) or _EMPTY_NODE.match(wid):
            lines.append(line)
            continue
        if not _INT.match(wid):
            raise ConlluError(name, line_no, Errors.E002.format(value=wid))
        number = _parse_int(wid, "ID", name, line_no)
        if number != len(words) + 1:
            raise ConlluError(
                name, line_no, Errors.E005.format(found=number, expected=len(words) + 1)
            )
        if not cols[1]:
            raise ConlluError(name, line_no, Errors.E007.format(word=number))
        head = None if cols[6] == "_" else _parse_int(cols[6], "HEAD", name, line_no)
        lines.append(len(words))
        words.append(Word(number, cols[1], cols[2], cols[3], cols[4], cols[5],
                          head, cols[7], cols[8], cols[9]))
    if not words:
        raise ConlluError(name, start, Errors.E008)
    n = len(words)
    for offset, item in enumerate(lines):
        if isinstance(item, int):
            head = words[item].head
            if head is not None and not 0 <= head <= n:
                raise ConlluError(
                    name, start + offset, Errors.E006.format(head=head, word=item + 1, n=n)
                )
    return Sentence(words, comments, lines, start, path=name, bom=bom)


def format_sentence(sent: Sentence) -> str:
    """The block's text: its lines, each ending in "\\n", then an empty line.

    Word lines are rebuilt from the `Word` fields; other lines are copied as read.
    The byte-order mark is not included (`write_conllu` writes it).
    """
    words = sent.words
    out = [words[item].to_line() if isinstance(item, int) else item for item in sent.lines]
    out.append("")
    out.append("")
    return "\n".join(out)


def write_conllu(sentences: Iterable[Sentence], target: str | os.PathLike[str] | IO[str]) -> None:
    """Write sentences to a path (UTF-8, "\\n" line ends) or an open text file."""
    if isinstance(target, (str, os.PathLike)):
        with open(target, "w", encoding="utf-8", newline="\n") as f:
            _write(sentences, f)
    else:
        _write(sentences, target)


def _write(sentences: Iterable[Sentence], f: IO[str]) -> None:
    for k, sent in enumerate(sentences):
        if k == 0 and sent.bom:
            f.write(BOM)
        f.write(format_sentence(sent))


def _word_label(sent: Sentence, i: int) -> str:
    return f"{i} {sent.words[i - 1].form!r}"


def validate_tree(sent: Sentence) -> None:
    """Raise TreeError, naming file and line, unless HEAD forms a tree (UD validate.py).

    Checks, in order: every word has a head, heads are in 0..n, exactly one word is
    attached to 0, and no cycle. For files read as gold for training or evaluation.
    """
    n = len(sent.words)

    def fail(i: int | None, message: str) -> TreeError:
        if sent.start_line < 1:  # built in memory, not read from a file
            return TreeError(sent.path, None, message)
        line = sent.start_line if i is None else sent.line_no(i)
        return TreeError(sent.path, line, message)

    for i, w in enumerate(sent.words, 1):
        if w.head is None:
            raise fail(i, Errors.E020.format(word=i, form=w.form))
        if not 0 <= w.head <= n:
            raise fail(i, Errors.E021.format(word=i, form=w.form, head=w.head, n=n))
    heads = sent.heads()
    roots = [i for i in range(1, n + 1) if heads[i] == 0]
    if not roots:
        raise fail(None, Errors.E022)
    if len(roots) > 1:
        words = ", ".join(_word_label(sent, i) for i in roots)
        raise fail(roots[1], Errors.E023.format(count=len(roots), words=words))
    cycle = find_cycle(heads)
    if cycle is not None:
        chain = " -> ".join(_word_label(sent, i) for i in [*cycle, cycle[0]])
        raise fail(cycle[0], Errors.E024.format(cycle=chain))


__all__ = [
    "Sentence",
    "Word",
    "format_sentence",
    "read_conllu",
    "read_conllu_string",
    "validate_tree",
    "write_conllu",
]

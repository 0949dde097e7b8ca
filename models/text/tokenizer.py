"""English tokenizer and sentence splitter following UD EWT conventions.

Pipeline for one text:
1. whitespace chunks, each scanned by one ordered regex (`_SCAN`): URLs, e-mail
   addresses, file/domain names, numbers with separators (1,000.50, 5:30,
   11/28/2000, 713-853-3989), letter-dot abbreviations (U.S., e.g.), words with
   inner apostrophes, runs of "." "!" "?" "-", then any other single character;
   a combining mark stays with the character before it (text not in NFC: "cafe"
   + U+0301 + "s" is one word, as "cafés" is);
2. conventions learned from the treebank (`lexicon.Lexicon`): adjacent pieces
   whose concatenation the treebank keeps whole are merged ("Dr." "e-mail"
   "co-workers"), multiword tokens are split into their words by the learned
   rules of `multiword.py` ("can't" -> "ca" "n't", "gonna" -> "gon" "na", any
   "...'s" -> "..." "'s");
3. sentence boundaries from `splitter.SentenceSplitter` (averaged perceptron
   over every gap between tokens).

A `Token` is a word. Words of a multiword token carry its span in `mwt` (None for a
word that is a token of its own) and are substrings of it where they concatenate
(EWT, IMST), so `text[start:end] == form`; where they do not ("del" -> "de" "el")
each has the token's span. `space_after` says whether whitespace (or the end of the
text) follows the word's token: False also for every word of a multiword token but
its last.
"""
from __future__ import annotations

import json
import logging
import os
import re
import unicodedata
from typing import NamedTuple

from models.text.lexicon import Lexicon
from models.text.splitter import SentenceSplitter

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
_EXT = (
    r"com|org|net|edu|gov|mil|info|biz|uk|us|de|fr|ca|au|io|ru|jp|"
    r"doc|docx|xls|xlsx|pdf|txt|htm|html|ppt|jpg|jpeg|gif|png|zip|exe"
)
_SCAN = re.compile(
    "|".join([
        r"(?P<url>(?:https?://|ftp://|www\.)[^\s]+)",
        r"(?P<email>[\w.+-]*@[\w-]+(?:\.[\w-]+)*)",
        rf"(?P<domain>\w[\w-]*(?:\.[\w-]+)*\.(?:{_EXT})\b(?:/[^\s]*)?)",
        r"(?P<phone>(?:\d{1,3}-)?\d{3}-\d{3}-\d{4}|\d{3}-\d{4})",
        r"(?P<number>\d+(?:[.,:/]\d+)+)",
        r"(?P<abbr>(?:[^\W\d_]\.){2,})",
        r"(?P<hashtag>#\w+)",
        r"(?P<emoticon>[:;=][-o^']?[)(\]\[dDpP/\\|*]|\^_\^|-_-|<3)",
        r"(?P<word>\w+(?:['’`]\w+)*)",
        r"(?P<run>\.{2,}|…|[!?]{2,}|(?P<rc>[^\w\s])(?P=rc)+)",
        r"(?P<other>[^\w\s])",
    ]),
    re.IGNORECASE,
)
_URL_TRAIL = re.compile(r"[.,;:!?)\]}'\"”’>]+$")
_MAX_MERGE = 7


def _is_mark(c: str) -> bool:
    return unicodedata.category(c)[0] == "M"


def _mask_marks(chunk: str) -> str:
    """`chunk` with each combining mark that follows a word character written as "a",
    so that the scanner's \\w sees one word (same length: offsets carry over)."""
    out, word = [], False
    for c in chunk:
        if _is_mark(c):
            out.append("a" if word else c)
        else:
            out.append(c)
            word = c.isalnum() or c == "_"
    return "".join(out)


class Token(NamedTuple):
    form: str
    start: int
    end: int
    mwt: tuple[int, int] | None = None   # span of the multiword token of this word
    space_after: bool = True


class Tokenizer:
    """Rule-based tokenizer with learned lexicons and a learned sentence splitter."""

    def __init__(self, lexicon: Lexicon | None = None, splitter: SentenceSplitter | None = None):
        self.lexicon = lexicon or Lexicon()
        self.splitter = splitter
        self._merge_keys = (self.lexicon.joined | self.lexicon.abbreviations
                            | set(self.lexicon.multiword.full))

    # -- tokenization ------------------------------------------------------
    def tokenize_sentence(self, text: str) -> list[Token]:
        """Tokens of `text`, no sentence splitting."""
        out: list[Token] = []
        for chunk in re.finditer(r"\S+", text):
            pieces = self._scan(chunk.group(), chunk.start())
            pieces = self._merge(pieces, text)
            for p in pieces:
                out.extend(self._split_multiword(p))
        for i, t in enumerate(out):
            if t.mwt is not None and i + 1 < len(out) and out[i + 1].mwt == t.mwt:
                out[i] = t._replace(space_after=False)       # inside its multiword token
            else:
                end = t.end if t.mwt is None else t.mwt[1]
                if end < len(text) and not text[end].isspace():
                    out[i] = t._replace(space_after=False)
        return out

    def tokenize(self, text: str) -> list[list[Token]]:
        """Sentences of tokens of running text."""
        tokens = self.tokenize_sentence(text)
        if not tokens:
            return []
        if self.splitter is None:
            return [tokens]
        ends = [i for i in self.splitter.boundaries(text, tokens)   # never inside a token
                if i + 1 == len(tokens) or tokens[i].mwt is None
                or tokens[i + 1].mwt != tokens[i].mwt]
        sents, begin = [], 0
        for i in ends:
            sents.append(tokens[begin:i + 1])
            begin = i + 1
        if begin < len(tokens):
            sents.append(tokens[begin:])
        return sents

    def _scan(self, chunk: str, offset: int) -> list[Token]:
        pieces: list[Token] = []
        pos = 0
        masked = chunk if chunk.isascii() else _mask_marks(chunk)
        while pos < len(chunk):
            m = _SCAN.match(masked, pos)
            if m is None:  # cannot happen: "other" matches any non-space
                pieces.append(Token(chunk[pos], offset + pos, offset + pos + 1))
                pos += 1
                continue
            end = m.end()
            if m.lastgroup in ("url", "domain"):
                trail = _URL_TRAIL.search(m.group())
                if trail and trail.start() > 0:
                    end = m.start() + trail.start()
            while end < len(chunk) and _is_mark(chunk[end]):
                end += 1               # a combining mark is never a token of its own
            pieces.append(Token(chunk[pos:end], offset + pos, offset + end))
            pos = end
        return pieces

    def _merge(self, pieces: list[Token], text: str) -> list[Token]:
        """Merge adjacent pieces the treebank keeps as one token."""
        lex = self.lexicon
        out: list[Token] = []
        i = 0
        while i < len(pieces):
            best = i
            for j in range(min(len(pieces), i + _MAX_MERGE) - 1, i, -1):
                if text[pieces[i].start:pieces[j].end].lower() in self._merge_keys:
                    best = j
                    break
            if best == i and i + 2 < len(pieces) and pieces[i + 1].form == "-" \
                    and pieces[i].form.lower() in lex.hyphen_prefixes \
                    and pieces[i + 2].form[:1].isalpha():
                best = i + 2
            if best == i and i + 1 < len(pieces) and pieces[i + 1].form == "." \
                    and len(pieces[i].form) == 1 and pieces[i].form.isupper():
                best = i + 1  # initials: "W."
            out.append(Token(text[pieces[i].start:pieces[best].end],
                             pieces[i].start, pieces[best].end))
            i = best + 1
        return out

    def _split_multiword(self, tok: Token) -> list[Token]:
        """The words of a surface token, by the learned multiword rules."""
        if tok.form.lower() in self.lexicon.joined:
            return [tok]
        words = self.lexicon.multiword.split(tok.form)
        if words is None:
            return [tok]
        span = (tok.start, tok.end)
        if "".join(words) != tok.form:
            return [Token(w, tok.start, tok.end, span) for w in words]
        out, p = [], tok.start
        for w in words:
            out.append(Token(w, p, p + len(w), span))
            p += len(w)
        return out

    # -- persistence ---------------------------------------------------------
    def save(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        self.lexicon.save(os.path.join(directory, "lexicon.json"))
        header = {"format_version": FORMAT_VERSION, "has_splitter": self.splitter is not None}
        with open(os.path.join(directory, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(header, f, indent=1)
        if self.splitter is not None:
            self.splitter.save(directory)

    @classmethod
    def load(cls, directory: str) -> Tokenizer:
        with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
            header = json.load(f)
        if header.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"tokenizer format {header.get('format_version')} != {FORMAT_VERSION}")
        lexicon = Lexicon.load(os.path.join(directory, "lexicon.json"))
        splitter = SentenceSplitter.load(directory) if header["has_splitter"] else None
        return cls(lexicon, splitter)

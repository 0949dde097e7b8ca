"""English tokenizer and sentence splitter following UD EWT conventions.

Pipeline for one text:
1. whitespace chunks, each scanned by one ordered regex (`_SCAN`): URLs, e-mail
   addresses, file/domain names, numbers with separators (1,000.50, 5:30,
   11/28/2000, 713-853-3989), letter-dot abbreviations (U.S., e.g.), words with
   inner apostrophes, runs of "." "!" "?" "-", then any other single character;
2. conventions learned from the treebank (`lexicon.Lexicon`): adjacent pieces
   whose concatenation the treebank keeps whole are merged ("Dr." "e-mail"
   "co-workers"), multiword tokens are split into their words ("can't" ->
   "ca" "n't", "gonna" -> "gon" "na");
3. a generic clitic rule for unseen words: n't 's 're 've 'll 'd 'm (with ' or ’);
4. sentence boundaries from `splitter.SentenceSplitter` (averaged perceptron
   over every gap between tokens).

Every `Token` keeps `start`/`end` offsets with `text[start:end] == form`: words
of a multiword token are substrings of it, as in EWT where they concatenate.
"""
from __future__ import annotations

import json
import logging
import os
import re
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
_CLITIC = re.compile(r"(?i)^(\w+?)(n['’]t|['’](?:s|re|ve|ll|d|m))$")
_MAX_MERGE = 7


class Token(NamedTuple):
    form: str
    start: int
    end: int


class Tokenizer:
    """Rule-based tokenizer with learned lexicons and a learned sentence splitter."""

    def __init__(self, lexicon: Lexicon | None = None, splitter: SentenceSplitter | None = None):
        self.lexicon = lexicon or Lexicon()
        self.splitter = splitter
        self._merge_keys = self.lexicon.joined | self.lexicon.abbreviations | set(self.lexicon.mwt)

    # -- tokenization ------------------------------------------------------
    def tokenize_sentence(self, text: str) -> list[Token]:
        """Tokens of `text`, no sentence splitting."""
        out: list[Token] = []
        for chunk in re.finditer(r"\S+", text):
            pieces = self._scan(chunk.group(), chunk.start())
            pieces = self._merge(pieces, text)
            for p in pieces:
                out.extend(self._split_clitics(p))
        return out

    def tokenize(self, text: str) -> list[list[Token]]:
        """Sentences of tokens of running text."""
        tokens = self.tokenize_sentence(text)
        if not tokens:
            return []
        if self.splitter is None:
            return [tokens]
        ends = self.splitter.boundaries(text, tokens)
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
        while pos < len(chunk):
            m = _SCAN.match(chunk, pos)
            if m is None:  # cannot happen: "other" matches any non-space
                pieces.append(Token(chunk[pos], offset + pos, offset + pos + 1))
                pos += 1
                continue
            end = m.end()
            if m.lastgroup in ("url", "domain"):
                trail = _URL_TRAIL.search(m.group())
                if trail and trail.start() > 0:
                    end = m.start() + trail.start()
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

    def _split_clitics(self, tok: Token) -> list[Token]:
        low = tok.form.lower()
        lengths = self.lexicon.mwt.get(low)
        if lengths is None:
            m = _CLITIC.match(tok.form)
            if m is None or low in self.lexicon.joined:
                return [tok]
            lengths = [len(m.group(1)), len(m.group(2))]
        out, p = [], tok.start
        for n in lengths:
            out.append(Token(tok.form[p - tok.start:p - tok.start + n], p, p + n))
            p += n
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

"""Tokenizer and sentence splitter: UD EWT's conventions, except where the treebank's
own were learned (`lexicon.py`, `multiword.py`, `segmenter.py`, `joiner.py`).

Pipeline for one text:
1. whitespace chunks, each scanned by one ordered regex (`_SCAN`): URLs, e-mail
   addresses, file/domain names, numbers with separators (1,000.50, 5:30,
   11/28/2000, 713-853-3989), letter-dot abbreviations (U.S., e.g.), dotted names
   of three or more parts with no known ending (alt.animals.cat), words with
   inner apostrophes, runs of "." "!" "?" "-", then any other single character;
   a combining mark stays with the character before it (text not in NFC: "cafe"
   + U+0301 + "s" is one word, as "cafés" is); for a script written without spaces
   the treebank's `segmenter.WordSegmenter` then cuts each run of letters and digits
   into its tokens;
2. conventions learned from the treebank (`lexicon.Lexicon`): adjacent pieces
   whose concatenation the treebank keeps whole are merged ("Dr." "e-mail"
   "co-workers"), multiword tokens are split into their words by the learned
   rules of `multiword.py` ("can't" -> "ca" "n't", "gonna" -> "gon" "na", any
   "...'s" -> "..." "'s"), or, for a form the treebank has both ways, by its
   `multiword_choice.MultiwordChooser` from the tokens around it ("its" -> "it" "s"
   in "its a shame"); punctuation the treebank keeps inside words or at their
   end stays there (Hungarian "1990-ben", "1996."; `Lexicon.inner`, `.trailing`),
   punctuation marks it writes together stay together (EWT ".?"; `Lexicon.pairs`), and
   words are cut after characters where it cuts them (French "l'" "homme";
   `Lexicon.cut_after`);
   where the treebank's tokens contain spaces (Vietnamese "Hà Nội"), its
   `joiner.SpaceJoiner` keeps pieces on either side of a space together;
3. sentence boundaries from `splitter.SentenceSplitter` (averaged perceptron
   over every gap between tokens); a blank line always ends a sentence, as it ends
   a paragraph in UD's raw text (UDPipe reads it so too).

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
from collections import deque
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from models.text.joiner import SpaceJoiner
from models.text.lexicon import (
    TRAILING_BEFORE,
    Lexicon,
    pair_key,
    punctuation_rules,
    trailing_key,
)
from models.text.multiword_choice import MultiwordChooser
from models.text.segmenter import WordSegmenter
from models.text.splitter import SentenceSplitter
from models.text.token_patterns import (
    DOT_EXT,
    NAME_WINDOW,
    PATH,
    REST,
    URL,
    URL_TRAIL,
    WORD_END,
    WORD_START,
    is_mark,
    mask_marks,
    name_at,
)

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
_MAX_MERGE = 7
PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")   # a blank line: a paragraph's end, a sentence's too


class Token(NamedTuple):
    form: str
    start: int
    end: int
    mwt: tuple[int, int] | None = None   # span of the multiword token of this word
    space_after: bool = True


def _mark_space_after(out: list[Token], text: str) -> list[Token]:
    """`out` with `space_after` False on every word of a multiword token but its last,
    and where no whitespace follows a word's token."""
    for i, t in enumerate(out):
        if t.mwt is not None and i + 1 < len(out) and out[i + 1].mwt == t.mwt:
            out[i] = t._replace(space_after=False)       # inside its multiword token
        else:
            end = t.end if t.mwt is None else t.mwt[1]
            if end < len(text) and not text[end].isspace():
                out[i] = t._replace(space_after=False)
    return out


def _in_context(pieces: Iterable[Token]) -> Iterator[tuple[Token, list[str], list[str]]]:
    """Each piece with the form before it and the forms of the two after it (fewer at
    the text's edges), for `multiword_choice`; read lazily, two pieces ahead."""
    ahead: deque[Token] = deque()
    source = iter(pieces)
    before: list[str] = []
    while True:
        while len(ahead) < 3 and (p := next(source, None)) is not None:
            ahead.append(p)
        if not ahead:
            return
        p = ahead.popleft()
        yield p, before, [q.form for q in ahead]
        before = [p.form]


def paragraph_ends(text: str, tokens: list[Token]) -> set[int]:
    """Indices i with a blank line between tokens[i] and tokens[i + 1]: a paragraph's
    end, where a sentence ends whatever the splitter says (the service reads a document
    as `deptree parse --input text` reads a file)."""
    return {i for i in range(len(tokens) - 1)
            if text.count("\n", tokens[i].end, tokens[i + 1].start) > 1
            and PARAGRAPH_BREAK.search(text, tokens[i].end, tokens[i + 1].start)}


class Tokenizer:
    """Rule-based tokenizer with learned lexicons and a learned sentence splitter."""

    def __init__(self, lexicon: Lexicon | None = None, splitter: SentenceSplitter | None = None,
                 segmenter: WordSegmenter | None = None, joiner: SpaceJoiner | None = None,
                 chooser: MultiwordChooser | None = None):
        self.lexicon = lexicon or Lexicon()
        self.splitter = splitter
        self.segmenter = segmenter          # scripts without spaces (`segmenter.py`)
        self.joiner = joiner                # tokens with spaces inside (`joiner.py`)
        self.chooser = chooser              # forms split in some contexts only
        self._merge_keys = (self.lexicon.joined | self.lexicon.abbreviations
                            | set(self.lexicon.multiword.full))

    # -- tokenization ------------------------------------------------------
    def tokenize_sentence(self, text: str, limit: int | None = None) -> list[Token]:
        """Tokens of `text`, no sentence splitting. With `limit`, tokenizing stops as soon
        as there are more than `limit` tokens (those are returned, for the caller to
        refuse): the work is bounded by the limit, not by the text."""
        out: list[Token] = []
        pieces = self.pieces(text)
        if self.joiner is not None:
            pieces = (Token(text[a:b], a, b) for a, b in self.joiner.join(pieces, text))
        placed = (_in_context(pieces) if self.chooser is not None
                  else ((p, None, None) for p in pieces))
        for p, before, after in placed:
            out.extend(self._split_multiword(p, before, after))
            if limit is not None and len(out) > limit:
                break
        return _mark_space_after(out, text)

    def learn_punctuation(self, sentences: list) -> None:
        """Set the lexicon's `inner`, `trailing` and `cut_after` characters and its
        punctuation `pairs` from the gold tokens of `sentences`
        (`lexicon.punctuation_rules`), against what the scanner's own patterns do (the
        forms the lexicon learned from the same sentences would hide every case)."""
        lex = self.lexicon
        scanner = Tokenizer(Lexicon(), segmenter=self.segmenter)
        lex.inner, lex.trailing, lex.cut_after, lex.pairs = punctuation_rules(
            sentences, lambda text: ((p.start, p.end) for p in scanner.pieces(text)))
        logger.info("punctuation kept inside words: %s; at their end: %s; cut after: %s; "
                    "kept in pairs: %s", *(" ".join(sorted(x)) or "none"
                                           for x in (lex.inner, lex.trailing, lex.cut_after,
                                                     lex.pairs)))

    def pieces(self, text: str) -> Iterator[Token]:
        """The surface tokens of `text` within its whitespace chunks (scanned, merged by
        the lexicon, not yet joined across spaces nor split into words), lazily."""
        for chunk in re.finditer(r"\S+", text):
            merged = self._merge(self._scan(chunk.group(), chunk.start()), text)
            if self.lexicon.cut_after:
                merged = (q for p in merged for q in self._cut_after(p))
            yield from merged

    def _cut_after(self, piece: Token) -> Iterator[Token]:
        """`piece` cut after each `Lexicon.cut_after` character with word characters on
        both sides ("l'homme" -> "l'" "homme"), unless the treebank keeps the form whole."""
        form, a = piece.form, 0
        if form.lower() not in self._merge_keys:
            for i in range(1, len(form) - 1):
                if form[i] in self.lexicon.cut_after and WORD_START.match(form, i - 1) \
                        and WORD_START.match(form, i + 1):
                    yield Token(form[a:i + 1], piece.start + a, piece.start + i + 1)
                    a = i + 1
        yield Token(form[a:], piece.start + a, piece.end)

    def tokenize(self, text: str, limit: int | None = None) -> list[list[Token]]:
        """Sentences of tokens of running text; over `limit` tokens (see
        `tokenize_sentence`) the tokens read so far, unsplit."""
        tokens = self.tokenize_sentence(text, limit)
        if not tokens:
            return []
        if limit is not None and len(tokens) > limit:
            return [tokens]
        learned = (self.splitter.boundaries(text, tokens) if self.splitter is not None
                   else [len(tokens) - 1])
        ends = sorted({i for i in learned                           # never inside a token
                       if i + 1 == len(tokens) or tokens[i].mwt is None
                       or tokens[i + 1].mwt != tokens[i].mwt} | paragraph_ends(text, tokens))
        sents, begin = [], 0
        for i in ends:
            sents.append(tokens[begin:i + 1])
            begin = i + 1
        if begin < len(tokens):
            sents.append(tokens[begin:])
        return sents

    def _scan(self, chunk: str, offset: int) -> Iterator[Token]:
        """The pieces of one whitespace-free chunk, lazily (so a caller can stop)."""
        pos = k = 0
        masked = chunk if chunk.isascii() else mask_marks(chunk)
        exts = [m.start() for m in DOT_EXT.finditer(masked)] if "." in chunk else []
        while pos < len(chunk):
            while k < len(exts) and exts[k] <= pos:
                k += 1
            near_ext = k < len(exts) and exts[k] < pos + NAME_WINDOW
            m = (URL.match(masked, pos) or name_at(masked, pos, near_ext)
                 or REST.match(masked, pos))
            if m is None:  # cannot happen: "other" matches any non-space
                yield Token(chunk[pos], offset + pos, offset + pos + 1)
                pos += 1
                continue
            end = m.end()
            if m.lastgroup == "domain" and (path := PATH.match(masked, end)):
                end = path.end()
            if m.lastgroup in ("url", "domain"):
                kept = len(chunk[pos:end].rstrip(URL_TRAIL))
                if kept > 0:
                    end = pos + kept
            while end < len(chunk) and is_mark(chunk[end]):
                end += 1               # a combining mark is never a token of its own
            a = 0
            if self.segmenter is not None and m.lastgroup == "word":
                for b in self.segmenter.iter_cuts(chunk[pos:end]):   # lazily, as a
                    yield Token(chunk[pos + a:pos + b], offset + pos + a, offset + pos + b)
                    a = b                                        # caller may stop
            yield Token(chunk[pos + a:end], offset + pos + a, offset + end)
            pos = end

    def _merge(self, pieces: Iterable[Token], text: str) -> Iterator[Token]:
        """Merge adjacent pieces the treebank keeps as one token (looking at most
        _MAX_MERGE pieces ahead, so pieces are read lazily)."""
        lex = self.lexicon
        ahead: deque[Token] = deque()
        source = iter(pieces)
        while True:
            while len(ahead) < _MAX_MERGE and (p := next(source, None)) is not None:
                ahead.append(p)
            if not ahead:
                return
            first, best = ahead[0], 0
            for j in range(len(ahead) - 1, 0, -1):
                if text[first.start:ahead[j].end].lower() in self._merge_keys:
                    best = j
                    break
            if best == 0 and len(ahead) > 2 and ahead[1].form == "-" \
                    and first.form.lower() in lex.hyphen_prefixes \
                    and ahead[2].form[:1].isalpha():
                best = 2
            if best == 0 and len(ahead) > 1 and ahead[1].form == "." \
                    and len(first.form) == 1 and first.form.isupper():
                best = 1  # initials: "W."
            if best == 0 and lex.inner:
                best = self._inner_run(ahead)
            if best == 0 and lex.trailing and len(ahead) > 1 and len(ahead[1].form) == 1 \
                    and WORD_END.search(first.form) \
                    and ahead[1].end < len(text) and (text[ahead[1].end].isspace()
                                                      or text[ahead[1].end] in TRAILING_BEFORE) \
                    and trailing_key(first.form, ahead[1].form) in lex.trailing:
                best = 1  # "1996." "élelmiszer-" where the treebank keeps them
            if best == 0 and lex.pairs:
                best = self._pair_run(ahead)
            yield Token(text[first.start:ahead[best].end], first.start, ahead[best].end)
            for _ in range(best + 1):
                ahead.popleft()

    def _inner_run(self, ahead: deque[Token]) -> int:
        """How many pieces after ahead[0] a token continues through characters the
        treebank keeps inside words (`Lexicon.inner`: "1990" "-" "ben"), word characters
        on both sides of each (the pieces are of one whitespace chunk: adjacent)."""
        j = 0
        while (j + 2 < len(ahead) and ahead[j + 1].form in self.lexicon.inner
               and WORD_END.search(ahead[j].form) and WORD_START.match(ahead[j + 2].form)):
            j += 2
        return j

    def _pair_run(self, ahead: deque[Token]) -> int:
        """How many pieces after ahead[0] a run of all-punctuation pieces continues
        through pairs the treebank keeps in one token (`Lexicon.pairs`: "." "?" -> ".?")."""
        j = 0
        while (j + 1 < len(ahead) and ahead[j + 1].start == ahead[j].end
               and pair_key(ahead[j].form, ahead[j + 1].form) in self.lexicon.pairs):
            j += 1
        return j

    def _split_multiword(self, tok: Token, before: list[str] | None = None,
                         after: list[str] | None = None) -> list[Token]:
        """The words of a surface token, by the learned multiword rules, or by the
        chooser from the pieces `before` and `after` it for a form that goes both ways."""
        if tok.form.lower() in self.lexicon.joined or any(c.isspace() for c in tok.form):
            return [tok]
        if self.chooser is not None and before is not None and tok.form in self.chooser:
            words = self.chooser.split(before, tok.form, after or [])
        else:
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
        header = {"format_version": FORMAT_VERSION, "has_splitter": self.splitter is not None,
                  "has_segmenter": self.segmenter is not None,
                  "has_joiner": self.joiner is not None,
                  "has_multiword_choice": self.chooser is not None}
        with open(os.path.join(directory, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(header, f, indent=1)
        if self.splitter is not None:
            self.splitter.save(directory)
        if self.segmenter is not None:
            self.segmenter.save(directory)
        if self.joiner is not None:
            self.joiner.save(directory)
        if self.chooser is not None:
            self.chooser.save(directory)

    @classmethod
    def load(cls, directory: str) -> Tokenizer:
        with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
            header = json.load(f)
        if header.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"tokenizer format {header.get('format_version')} != {FORMAT_VERSION}")
        lexicon = Lexicon.load(os.path.join(directory, "lexicon.json"))
        splitter = SentenceSplitter.load(directory) if header["has_splitter"] else None
        segmenter = (WordSegmenter.load(directory) if header.get("has_segmenter") else None)
        joiner = SpaceJoiner.load(directory) if header.get("has_joiner") else None
        chooser = (MultiwordChooser.load(directory) if header.get("has_multiword_choice")
                   else None)
        return cls(lexicon, splitter, segmenter, joiner, chooser)

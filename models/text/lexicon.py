"""Tokenization lexicons learned from a UD treebank (EWT conventions).

The rule-based scanner in `tokenizer.py` handles what rules do well (URLs,
e-mail addresses, numbers with separators, clitic suffixes); what is a matter
of convention is read from the gold tokenization of the training data:

- `abbreviations`: lowercased tokens ending in "." that are words ("dr.", "u.s.").
- `multiword`: the rules that split multiword tokens into words ("can't" -> "ca" +
  "n't", any "...n't" -> "..." + "n't"), see `multiword.py`.
- `joined`: lowercased tokens with inner punctuation kept whole more often than
  split ("e-mail", "at&t", "yahoo!").
- `hyphen_prefixes`: first parts X of tokens "X-Y" kept whole ("co", "non").
- `inner`: punctuation characters the treebank keeps inside a token between two word
  characters nearly always (`INNER_SHARE` of at least `INNER_MIN` cases): the hyphen of
  Hungarian and Dutch ("élelmiszer-ipari", "1990-ben"), which then holds in words the
  treebank never had. EWT keeps 45% of its inner hyphens and splits the rest: its
  hyphen stays with `joined` and `hyphen_prefixes`.
- `trailing`: the same for a character between a word and a space, a comma, a
  semicolon, a colon or a closing bracket, after digits ("d.": the Hungarian ordinal
  "1996.", "(augusztus 21.)") or letters ("w-": "élelmiszer- és", "hús-, tej- és");
  after letters never . ! ?, which end sentences (abbreviations are `abbreviations`).
- `cut_after`: characters inside a word after which the treebank nearly always starts
  a new token, where the scanner keeps the word whole: the apostrophe of French and
  Italian elision ("l'" "homme"); a form in `joined` ("aujourd'hui") stays whole.
- `pairs`: two punctuation characters, the end of one all-punctuation piece and the
  start of the next, that the treebank keeps in one token more often than not where
  the scanner cuts them: EWT's ".?" (31 of 37) and "!." (4 of 5). IMST cuts "?." and
  "!." (15 of 15, 7 of 7): which pairs hold is the treebank's.

Saved as one JSON file; no pickling. Format 1 (before multiword rules were learned)
still loads: its token -> word-lengths table becomes full rules, with the English
clitic suffixes that tokenizer applied to every token; a file without `inner`,
`trailing`, `cut_after` or `pairs` (before they were learned) loads with none.
"""
from __future__ import annotations

import json
import logging
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from models.text._conllu import Sentence
from models.text.multiword import MultiwordRules, learn_multiword

logger = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: multiword rules (full and suffix) instead of word lengths
_HAS_WORD = re.compile(r"\w")
_INNER_PUNCT = re.compile(r"\w[^\w\s]+\w|[^\w\s]\w|\w[^\w\s]")
_BETWEEN_WORDS = re.compile(r"(?<=\w)[^\w\s](?=\w)")
# what may follow a `trailing` character: whitespace or one of these
TRAILING_BEFORE = ",;:)]"
_BEFORE_GAP = re.compile(rf"(?<=\w)[^\w\s](?=\s|[{re.escape(TRAILING_BEFORE)}])")
INNER_SHARE = 0.9
# 5, not 10: nl_lassysmall's 1,234 training sentences keep "/" (7 of 7) and "&" (5 of 5)
# inside words, which 10 missed (dev word F1 98.91 -> 99.03); en_ewt, hu_szeged and
# tr_imst cut no token differently (bench/journal/12-any-treebank.md, "From raw text
# against UDPipe 1.4")
INNER_MIN = 5
# a pair is kept by a majority of at least INNER_MIN cases: the rule is the pair itself,
# not a character that then holds in words the treebank never had (`inner`), so the
# likelier answer is the better one
PAIR_SHARE = 0.5
_ALL_PUNCT = re.compile(r"[^\w\s]+")
_SENTENCE_END = set(".!?…。")   # never inner, nor trailing after letters: a sentence may end there


@dataclass
class Lexicon:
    abbreviations: set[str] = field(default_factory=set)
    multiword: MultiwordRules = field(default_factory=MultiwordRules)
    joined: set[str] = field(default_factory=set)
    hyphen_prefixes: set[str] = field(default_factory=set)
    inner: set[str] = field(default_factory=set)
    trailing: set[str] = field(default_factory=set)
    cut_after: set[str] = field(default_factory=set)
    pairs: set[str] = field(default_factory=set)

    def to_json(self) -> dict:
        return {
            "format_version": FORMAT_VERSION,
            "abbreviations": sorted(self.abbreviations),
            "multiword": self.multiword.to_json(),
            "joined": sorted(self.joined),
            "hyphen_prefixes": sorted(self.hyphen_prefixes),
            "inner": sorted(self.inner),
            "trailing": sorted(self.trailing),
            "cut_after": sorted(self.cut_after),
            "pairs": sorted(self.pairs),
        }

    @classmethod
    def from_json(cls, data: dict) -> Lexicon:
        version = data.get("format_version")
        if version == 1:
            multiword = MultiwordRules.from_lengths(data["mwt"])
        elif version == FORMAT_VERSION:
            multiword = MultiwordRules.from_json(data["multiword"])
        else:
            raise ValueError(f"lexicon format {version} is not 1 or {FORMAT_VERSION}")
        return cls(
            set(data["abbreviations"]),
            multiword,
            set(data["joined"]),
            set(data["hyphen_prefixes"]),
            set(data.get("inner", ())),
            set(data.get("trailing", ())),
            set(data.get("cut_after", ())),
            set(data.get("pairs", ())),
        )

    def save(self, path: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, ensure_ascii=False, indent=0)

    @classmethod
    def load(cls, path: str) -> Lexicon:
        with open(path, encoding="utf-8") as f:
            return cls.from_json(json.load(f))


def learn_lexicon(sentences: list[Sentence], min_count: int = 1) -> Lexicon:
    """Read the conventions above from gold surface tokens and their words."""
    whole: Counter[str] = Counter()
    split_total: Counter[str] = Counter()
    for s in sentences:
        for t in s.tokens:
            (split_total if t.last > t.first else whole)[t.form.lower()] += 1
    lex = Lexicon(multiword=learn_multiword(sentences))
    for low, n in whole.items():
        if n < min_count or not _HAS_WORD.search(low):
            continue
        if low.endswith(".") and len(low) > 1 and re.fullmatch(r"[^\W\d_][\w.]*\.", low):
            lex.abbreviations.add(low)
        if _INNER_PUNCT.search(low):
            lex.joined.add(low)
            m = re.fullmatch(r"([^\W\d_]+)-[^\W\d_]+", low)
            if m:
                lex.hyphen_prefixes.add(m.group(1))
    # Keep a joined form / hyphen prefix only where the treebank keeps it whole
    # more often than it splits it into adjacent tokens with no space between.
    glued = _glued_sequences(sentences)
    lex.joined = {j for j in lex.joined if whole[j] > glued[j] + split_total[j]}
    pieces: Counter[str] = Counter()
    for s in sentences:
        forms = [t.form.lower() for t in s.tokens]
        for i in range(len(forms) - 2):
            if forms[i + 1] == "-" and not s.tokens[i].space_after:
                pieces[forms[i]] += 1
    kept: Counter[str] = Counter()
    for low, n in whole.items():
        if re.fullmatch(r"[^\W\d_]+-[^\W\d_]+", low):
            kept[low.split("-", 1)[0]] += n
    lex.hyphen_prefixes = {p for p in lex.hyphen_prefixes if kept[p] > pieces[p]}
    logger.info(
        "lexicon: %d abbreviations, %d multiword tokens, %d joined, %d hyphen prefixes",
        len(lex.abbreviations), len(lex.multiword.full), len(lex.joined),
        len(lex.hyphen_prefixes),
    )
    return lex


def trailing_key(word: str, char: str) -> str:
    """The `Lexicon.trailing` key of `char` after `word` (or its last character): "d"
    after a digit, else "w"."""
    return ("d" if word[-1:].isdigit() else "w") + char


def pair_key(left: str, right: str) -> str | None:
    """The `Lexicon.pairs` key of two adjacent pieces, the last character of one and the
    first of the other, if both are all punctuation; else None."""
    if _ALL_PUNCT.fullmatch(left) and _ALL_PUNCT.fullmatch(right):
        return left[-1] + right[0]
    return None


class PunctuationRules(NamedTuple):
    inner: set[str]
    trailing: set[str]
    cut_after: set[str]
    pairs: set[str]


def punctuation_rules(sentences: list[Sentence],
                      pieces: Callable[[str], Iterable[tuple[int, int]]]) -> PunctuationRules:
    """`inner`, `trailing` and `cut_after` (see `Lexicon`): the punctuation characters
    between two word characters, and between a word and a space or ,;:)], that the gold tokens
    keep inside one token, and those inside a word after which they start a new one, in
    at least INNER_SHARE of INNER_MIN or more cases each; and `pairs`, kept across the cut
    between two all-punctuation pieces in more than PAIR_SHARE of INNER_MIN or more.
    `pieces` gives the tokenizer's spans without these rules: only the cases it cuts count
    towards keeping, only those it keeps towards cutting (what its own patterns do, times
    and URLs, says nothing of the rest)."""
    seen: Counter[str] = Counter()
    done: Counter[str] = Counter()
    pair_seen: Counter[str] = Counter()
    pair_done: Counter[str] = Counter()
    for s in sentences:
        spans = s.token_spans()
        if spans is None:
            continue
        inside = {i for a, b in spans for i in range(a + 1, b)}   # not a token's first
        scanned = list(pieces(s.text))
        base = {i for a, b in scanned for i in range(a + 1, b)}
        for (a, b), (c, d) in zip(scanned, scanned[1:]):
            if b == c and (pair := pair_key(s.text[a:b], s.text[c:d])) is not None:
                pair_seen[pair] += 1
                pair_done[pair] += c in inside
        for m in _BETWEEN_WORDS.finditer(s.text):
            a, b, c = m.start(), m.end(), m.group()
            if a not in base or b not in base:
                seen[c] += 1
                done[c] += a in inside and b in inside
            else:
                seen[">" + c] += 1
                done[">" + c] += a in inside and b not in inside
        for m in _BEFORE_GAP.finditer(s.text):
            if m.start() not in base:
                key = trailing_key(s.text[m.start() - 1], m.group())
                seen[key] += 1
                done[key] += m.start() in inside
    ok = {c for c, n in seen.items() if n >= INNER_MIN and done[c] >= INNER_SHARE * n}
    return PunctuationRules(
        {c for c in ok if len(c) == 1 and c not in _SENTENCE_END},
        {c for c in ok if len(c) == 2 and c[0] != ">"
         and not (c[0] == "w" and c[1] in _SENTENCE_END)},
        {c[1] for c in ok if c[0] == ">"},
        {p for p, n in pair_seen.items() if n >= INNER_MIN and pair_done[p] > PAIR_SHARE * n})


def _glued_sequences(sentences: list[Sentence], max_len: int = 5) -> Counter[str]:
    """Count lowercased concatenations of 2..max_len adjacent tokens without spaces."""
    glued: Counter[str] = Counter()
    for s in sentences:
        toks = s.tokens
        for i in range(len(toks)):
            text = toks[i].form
            for j in range(i + 1, min(i + max_len, len(toks))):
                if toks[j - 1].space_after:
                    break
                text += toks[j].form
                glued[text.lower()] += 1
    return glued

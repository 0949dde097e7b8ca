"""The tokenizer's scanner: one ordered alternation of regexes over a whitespace
chunk (URLs, e-mail addresses and domain names, phone numbers, numbers with
separators, abbreviations, dotted names, hashtags, emoticons, words, runs of
punctuation), and the helpers that keep combining marks with their letters
(`tokenizer.py`, step 1)."""
from __future__ import annotations

import re
import unicodedata

EXT = (
    r"com|org|net|edu|gov|mil|info|biz|uk|us|de|fr|ca|au|io|ru|jp|"
    r"doc|docx|xls|xlsx|pdf|txt|htm|html|ppt|jpg|jpeg|gif|png|zip|exe"
)
# One ordered alternation, tried in three parts (the first part that matches wins, as
# in a single alternation): URLs; e-mail addresses and domain names, which are matched
# inside a window of NAME_WINDOW characters (RFC 5321 caps an address at 254, DNS a
# name at 253), since each can scan a long run of word characters and dots only to
# fail, and at every start position in the run that made scanning quadratic (16 kB of
# "a.ba.b..." took 5 s of CPU, bench/RESULTS.md, "Hostile inputs"); then the rest, whose
# patterns consume what they scan.
URL = re.compile(r"(?P<url>(?:https?://|ftp://|www\.)[^\s]+)", re.IGNORECASE)
EMAIL = re.compile(r"(?P<email>[\w.+-]*@[\w-]+(?:\.[\w-]+)*)", re.IGNORECASE)
DOMAIN = re.compile(rf"(?P<domain>\w[\w-]*(?:\.[\w-]+)*\.(?:{EXT})\b)", re.IGNORECASE)
DOT_EXT = re.compile(rf"\.(?:{EXT})\b", re.IGNORECASE)      # what a domain must contain
PATH = re.compile(r"/[^\s]*")                  # a domain's path, as long as it goes
NAME_WINDOW = 256
REST = re.compile(
    "|".join([
        r"(?P<phone>(?:\d{1,3}-)?\d{3}-\d{3}-\d{4}|\d{3}-\d{4})",
        r"(?P<number>\d+(?:[.,:/]\d+)+)",
        r"(?P<abbr>(?:[^\W\d_]\.){2,})",
        # newsgroups, hosts, packages (EWT train keeps all 23 whole); later parts start
        # with an ASCII lower-case letter, so "home.Then.It" (no spaces after full
        # stops) is not one; the first part has no hyphen, so a failed try stops at
        # once ("a-a-a..." stays linear); at most 9 parts: a token of at most 535
        r"(?P<dotted>[^\W\d_]\w{1,30}(?:\.(?-i:[a-z])\w{1,30}(?:-\w{1,30})?){2,8})",
        r"(?P<hashtag>#\w+)",
        r"(?P<emoticon>[:;=][-o^']?[)(\]\[dDpP/\\|*]|\^_\^|-_-|<3)",
        r"(?P<word>\w+(?:['’`]\w+)*)",
        r"(?P<run>\.{2,}|…|[!?]{2,}|(?P<rc>[^\w\s])(?P=rc)+)",
        r"(?P<other>[^\w\s])",
    ]),
    re.IGNORECASE,
)
URL_TRAIL = ".,;:!?)]}'\"”’>"                # cut from the end of a URL or domain path
WORD_START = re.compile(r"\w")        # matched at a position: a word character there
WORD_END = re.compile(r"\w$")


def is_mark(c: str) -> bool:
    return unicodedata.category(c)[0] == "M"


def mask_marks(chunk: str) -> str:
    """`chunk` with each combining mark that follows a word character written as "a",
    so that the scanner's \\w sees one word (same length: offsets carry over)."""
    out, word = [], False
    for c in chunk:
        if is_mark(c):
            out.append("a" if word else c)
        else:
            out.append(c)
            word = c.isalnum() or c == "_"
    return "".join(out)


def name_at(chunk: str, pos: int, near_ext: bool) -> re.Match | None:
    """An e-mail address or domain name starting at `pos`, within NAME_WINDOW. Each is
    tried only if what it needs is in the window: an "@" (a memchr), a ".com"-like
    ending (`near_ext`, from one pass over the chunk): no regex rescans the run."""
    end = pos + NAME_WINDOW
    m = EMAIL.match(chunk, pos, end) if chunk.find("@", pos, end) >= 0 else None
    if m is None and near_ext:
        m = DOMAIN.match(chunk, pos, end)
    return m

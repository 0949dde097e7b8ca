"""Word shape: the character classes of a form, shared by the tagger and the splitter."""
from __future__ import annotations


def char_classes(form: str, limit: int) -> str:
    """Classes of the first `limit` characters, runs collapsed: upper "X", lower "x",
    digit "d", anything else itself ("McDonald's" -> "XxXx'x", "1,000.50" -> "d,d.d")."""
    out: list[str] = []
    for ch in form[:limit]:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)

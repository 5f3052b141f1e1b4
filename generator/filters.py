"""Name filters: comma- or semicolon-separated patterns; '*' matches any run of
characters, and the literal pieces between '*'s must occur in order. A pattern
without '*' must match the whole name. 'all' (include, alone or in a list) means every
valid kernel; an empty include list means each family's default set."""

import re
from typing import Callable, Iterable, List, Optional, Sequence

from .model import Config


def split_patterns(text: Optional[str]) -> List[str]:
    if not text:
        return []
    return [p.strip() for p in re.split(r"[,;]", text) if p.strip()]


def match(pattern: str, name: str) -> bool:
    # runs of '*' are one '*' (else the regex's adjacent '.*'s backtrack exponentially)
    pieces = re.sub(r"\*+", "*", pattern).split("*")
    regex = "^" + ".*".join(re.escape(piece) for piece in pieces) + "$"
    return re.match(regex, name) is not None


def select(configs: Iterable[Config], include: Sequence[str], exclude: Sequence[str],
           is_default: Callable[[Config], bool]) -> List[Config]:
    """Filter configs by include / exclude pattern lists (already split)."""
    out = []
    for c in configs:
        if not include:
            keep = is_default(c)
        elif "all" in include:
            keep = True
        else:
            keep = any(match(p, c.name) for p in include)
        if keep and any(match(p, c.name) for p in exclude):
            keep = False
        if keep:
            out.append(c)
    return out


def unmatched(patterns: Sequence[str], names: Sequence[str]) -> List[str]:
    """The patterns (other than 'all') that match none of names."""
    return [p for p in patterns if p != "all" and not any(match(p, n) for n in names)]

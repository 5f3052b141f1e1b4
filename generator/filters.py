"""Name filters: comma- or semicolon-separated patterns; '*' matches any run of
characters, and the literal pieces between '*'s must occur in order. A pattern
without '*' must match the whole name. 'all' (include) means every valid kernel;
an empty include list means each family's default set."""
import re


def split_patterns(text):
    if not text:
        return []
    return [p.strip() for p in re.split(r"[,;]", text) if p.strip()]


def match(pattern, name):
    regex = "^" + ".*".join(re.escape(piece) for piece in pattern.split("*")) + "$"
    return re.match(regex, name) is not None


def select(configs, include, exclude, is_default):
    """Filter configs by include / exclude pattern lists (already split)."""
    out = []
    for c in configs:
        if not include:
            keep = is_default(c)
        elif include == ["all"]:
            keep = True
        else:
            keep = any(match(p, c.name) for p in include)
        if keep and any(match(p, c.name) for p in exclude):
            keep = False
        if keep:
            out.append(c)
    return out

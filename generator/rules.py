"""The heuristic's rule table: heuristics/rules.tsv parsed and checked for rendering into C.

One row per w4a16_heuristic_rule (include/w4a16/select.h), in table order; the columns are
the struct's fields by name, in the struct's order, then `note` (what the row is for). An
empty cell is 0: an open bound, "any" for a bit mask. Lines starting with '#' are comments.

Cell spellings:
  family                     SM80, SM90, GEMV (W4A16_FAMILY_*) or ANY (-1)
  modes, schedules, dtypes   '|'-separated enumerator names without the W4A16_ prefix (and,
                             for schedules and dtypes, without SCHEDULE_ / DTYPE_), e.g.
                             FINEGRAINED_SCALE_AND_ZEROS|PER_COLUMN_SCALE_ONLY, GEMV_TMA, F16
  min_waves_eff              a decimal fraction, e.g. 0.75
  every other field          a decimal integer
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES_TSV = os.path.join(ROOT, "heuristics", "rules.tsv")

# (field, kind) in the order of w4a16_heuristic_rule's members
FIELDS: Tuple[Tuple[str, str], ...] = (
    ("name", "name"),
    ("m_min", "int"), ("m_max", "int"), ("n_min", "int"), ("n_max", "int"),
    ("k_min", "int"), ("k_max", "int"),
    ("sm_count_min", "int"), ("sm_count_max", "int"), ("cc_min", "int"), ("cc_max", "int"),
    ("family", "family"),
    ("tile_m_min", "int"), ("tile_m_max", "int"), ("tile_n_min", "int"), ("tile_n_max", "int"),
    ("stages_min", "int"), ("stages_max", "int"), ("m_tiles_max", "int"),
    ("min_waves_eff", "float"),
    ("tile_k_min", "int"), ("tile_k_max", "int"),
    ("modes", "modes"), ("group_max", "int"),
    ("threads_min", "int"), ("threads_max", "int"), ("cluster_max", "int"),
    ("schedules", "schedules"), ("cluster_min", "int"), ("dtypes", "dtypes"),
    ("mem_gbps_min", "int"), ("mem_gbps_max", "int"),
)
COLUMNS: Tuple[str, ...] = tuple(f for f, _ in FIELDS) + ("note",)

FAMILIES: Dict[str, str] = {"SM80": "W4A16_FAMILY_SM80", "SM90": "W4A16_FAMILY_SM90",
                            "GEMV": "W4A16_FAMILY_GEMV", "ANY": "-1"}
# bit-mask columns: cell name -> the C enumerator whose bit it sets
MASKS: Dict[str, Dict[str, str]] = {
    "modes": {m: "W4A16_" + m for m in ("PER_COLUMN_SCALE_ONLY", "FINEGRAINED_SCALE_ONLY",
                                        "FINEGRAINED_SCALE_AND_ZEROS")},
    "schedules": {s: "W4A16_SCHEDULE_" + s for s in ("MULTISTAGE", "COOPERATIVE", "PINGPONG",
                                                    "GEMV", "GEMV_TMA")},
    "dtypes": {d: "W4A16_DTYPE_" + d for d in ("F16", "BF16")},
}
NAME_RE = re.compile(r"^[A-Za-z0-9_.+-]+$")
INT_RE = re.compile(r"^-?[0-9]+$")
FLOAT_RE = re.compile(r"^[0-9]+(\.[0-9]+)?$")


class RulesError(ValueError):
    """A malformed rules file; the message names the file, line and column."""


@dataclass(frozen=True)
class Rule:
    """One row: C initializer expressions of its non-zero fields, and its note."""
    name: str
    fields: Tuple[Tuple[str, str], ...]
    note: str


def c_value(kind: str, cell: str, where: str) -> Optional[str]:
    """The C expression for a cell of the given kind; None for an empty cell (0)."""
    if cell == "":
        if kind in ("name", "family"):
            raise RulesError("%s: empty (this column has no default)" % where)
        return None
    if kind == "name":
        if not NAME_RE.match(cell):
            raise RulesError("%s: rule name %r has characters outside [A-Za-z0-9_.+-]" % (where, cell))
        return '"%s"' % cell
    if kind == "family":
        if cell not in FAMILIES:
            raise RulesError("%s: family %r is not one of %s" % (where, cell, ", ".join(FAMILIES)))
        return FAMILIES[cell]
    if kind == "int":
        if not INT_RE.match(cell):
            raise RulesError("%s: %r is not a decimal integer" % (where, cell))
        return None if int(cell) == 0 else str(int(cell))
    if kind == "float":
        if not FLOAT_RE.match(cell) or float(cell) > 1.0:
            raise RulesError("%s: %r is not a fraction in [0, 1]" % (where, cell))
        return None if float(cell) == 0.0 else "%sf" % cell
    names = MASKS[kind]
    bits: List[str] = []
    for part in cell.split("|"):
        if part not in names:
            raise RulesError("%s: %r is not one of %s" % (where, part, ", ".join(names)))
        if names[part] in bits:
            raise RulesError("%s: %r named twice" % (where, part))
        bits.append(names[part])
    if len(bits) == 1:
        return "1u << %s" % bits[0]
    return " | ".join("(1u << %s)" % b for b in bits)


def parse(text: str, path: str = RULES_TSV) -> List[Rule]:
    """The rules of a rules file's text, in order; raises RulesError on any malformed line."""
    rules: List[Rule] = []
    header: Optional[List[str]] = None
    names = set()
    rel = os.path.relpath(path, ROOT) if os.path.isabs(path) else path
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith("#") or line.strip() == "":
            continue
        cells = line.split("\t")
        if header is None:
            if tuple(cells) != COLUMNS:
                unknown = [c for c in cells if c not in COLUMNS]
                raise RulesError("%s:%d: the header must name the columns %s in that order%s"
                                 % (rel, lineno, " ".join(COLUMNS),
                                    " (unknown: %s)" % ", ".join(unknown) if unknown else ""))
            header = cells
            continue
        if len(cells) != len(COLUMNS):
            raise RulesError("%s:%d: %d cells, the header has %d" % (rel, lineno, len(cells), len(COLUMNS)))
        fields: List[Tuple[str, str]] = []
        for (field, kind), cell in zip(FIELDS, cells):
            value = c_value(kind, cell.strip(), "%s:%d: %s" % (rel, lineno, field))
            if value is not None:
                fields.append((field, value))
        name = cells[0].strip()
        if name in names:
            raise RulesError("%s:%d: rule name %r repeats an earlier row" % (rel, lineno, name))
        names.add(name)
        note = cells[-1].strip()
        if not note or "*/" in note:
            raise RulesError("%s:%d: note: empty or holds '*/'" % (rel, lineno))
        rules.append(Rule(name=name, fields=tuple(fields), note=note))
    if header is None or not rules:
        raise RulesError("%s: no header line or no rules" % rel)
    return rules


def load(path: str = RULES_TSV) -> List[Rule]:
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), path)

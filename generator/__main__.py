"""python3 -m generator {list,emit} [--archs 80;90a] [--kernels F] [--exclude F]

list   print the selected kernel names (one per line), or with --format cmake the
       generated file names as a CMake list, or with --all-invalid the rejected
       configurations and why
emit   render the selected kernels, the registry, kernels.txt and the heuristic's rule table
       (heuristics/rules.tsv -> heuristic_rules.c) into --out
wgmma  print runtime/cuda/sm90/sm90_wgmma.cuh (the wgmma inline-PTX wrappers)
fit    write heuristics/rules.tsv from heuristics/fit.tsv, the profiles in heuristics/profiles
       and heuristics/overrides.tsv (python3 -m generator fit --help; generator/fit.py)
"""
import argparse
import sys
from types import ModuleType
from typing import Dict, Iterator, List, Optional, Set, Tuple

from . import filters
from .families import FAMILIES
from .model import Arch, Config, archs_from_cmake


def parse_archs(text: str) -> Set[Arch]:
    archs: Set[Arch] = set()
    for a in filters.split_patterns(text):
        targets = archs_from_cmake(a)
        if targets is None:
            raise SystemExit("generator: architecture '%s' is not one of compute capability 8.0 or later "
                             "(e.g. 80, 86, 89, 90a, 100, 120; 'sm_' prefixes and '8.6' spellings accepted)" % a)
        archs.update(targets)
    return archs


def candidates() -> Iterator[Tuple[ModuleType, Config, bool, str]]:
    """(config, ok, reason) for every enumerated configuration of every family."""
    for fam in FAMILIES:
        for c in fam.enumerate():
            ok, why = fam.is_valid(c)
            yield fam, c, ok, why


def select(archs: Set[Arch], include: List[str], exclude: List[str]) -> List[Config]:
    by_family: Dict[ModuleType, List[Config]] = {}
    for fam, c, ok, _ in candidates():
        if ok and c.arch in archs:
            by_family.setdefault(fam, []).append(c)
    # a pattern that names no valid kernel of these architectures is a mistake (a typo would
    # otherwise build fewer kernels, or none, without a word)
    valid = [c.name for configs in by_family.values() for c in configs]
    for what, pats in (("--kernels", include), ("--exclude", exclude)):
        bad = filters.unmatched(pats, valid)
        if bad:
            raise SystemExit("generator: %s pattern%s %s match%s no valid kernel for the architectures %s"
                             % (what, "s" if len(bad) > 1 else "", ", ".join("'%s'" % b for b in bad),
                                "" if len(bad) > 1 else "es", ";".join(sorted(a.value for a in archs))))
    chosen = []
    for fam, configs in by_family.items():
        chosen += filters.select(configs, include, exclude, fam.is_default)
    names = [c.name for c in chosen]
    if len(names) != len(set(names)):
        raise SystemExit("generator: duplicate kernel names")
    if not chosen:
        raise SystemExit("generator: the filters select no kernel")
    return sorted(chosen, key=lambda c: c.name)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["fit"]:
        from . import fit
        return fit.main(argv[1:])
    ap = argparse.ArgumentParser(prog="python3 -m generator", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["list", "emit", "wgmma", "fit"])
    ap.add_argument("--archs", default="80;90a", help="build targets, e.g. '80;90a'")
    ap.add_argument("--kernels", default="", help="include filter ('all' = every valid kernel)")
    ap.add_argument("--exclude", default="", help="exclude filter")
    ap.add_argument("--out", help="output folder (emit)")
    ap.add_argument("--format", choices=["names", "cmake"], default="names")
    ap.add_argument("--all-invalid", action="store_true", help="list rejected configurations")
    args = ap.parse_args(argv)

    if args.command == "wgmma":
        from . import wgmma
        wgmma.main()
        return 0
    if args.command == "list" and args.all_invalid:
        for _, c, ok, why in candidates():
            if not ok:
                print("%s\t%s" % (c.name, why))
        return 0
    configs = select(parse_archs(args.archs), filters.split_patterns(args.kernels),
                     filters.split_patterns(args.exclude))
    if args.command == "list":
        if args.format == "cmake":
            print(";".join("%s|%s" % (c.arch.value, c.name) for c in configs))
        else:
            for c in configs:
                print(c.name)
        return 0
    if not args.out:
        ap.error("emit needs --out")
    from . import render, rules
    try:
        written, removed = render.emit(configs, args.out)
    except rules.RulesError as e:  # a malformed heuristics/rules.tsv: the line and column, no traceback
        raise SystemExit("generator: %s" % e)
    print("generator: %d kernels, %d files written, %d stale removed"
          % (len(configs), len(written), len(removed)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Rendering: one .cu per instantiation, the registry table, the manifest, the heuristic's rules.

Deterministic: configurations sorted by name, no timestamps, byte-identical
across runs. A file is written only when its content changed; files of the
output folder that this run did not produce (stale kernels) are removed.
"""
import os
from typing import Dict, Iterable, List, Optional, Tuple

import jinja2

from . import rules as rules_mod
from .model import Config
from .rules import Rule

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "templates")
GENERATED_SUFFIXES = (".cu", ".c", ".txt")


def environment(template_dir: str = TEMPLATE_DIR) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(template_dir),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True, autoescape=False)


def write_if_different(path: str, text: str) -> bool:
    """Write text to path unless it already holds exactly that. Returns True if written."""
    data = text.encode("utf-8")
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    except FileNotFoundError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return True


def kernel_file(config: Config) -> str:
    return "%s.cu" % config.name


def render_rules(rules: List[Rule], env: Optional[jinja2.Environment] = None) -> str:
    """heuristic_rules.c: the rule table of heuristics/rules.tsv (generator/rules.py) as C."""
    env = env or environment()
    return env.get_template("heuristic_rules.c.j2").render(rules=rules, template="heuristic_rules.c.j2")


def render_all(configs: Iterable[Config], env: Optional[jinja2.Environment] = None,
               rules: Optional[List[Rule]] = None) -> Dict[str, str]:
    """{relative path: text} for every output file; rules defaults to heuristics/rules.tsv's."""
    env = env or environment()
    rules = rules_mod.load() if rules is None else rules
    configs = sorted(configs, key=lambda c: c.name)
    out = {}
    for c in configs:
        out[kernel_file(c)] = env.get_template(c.template).render(k=c, template=c.template)
    out["registry.c"] = env.get_template("registry.c.j2").render(
        kernels=[c for c in configs if not c.grouped], grouped=[c for c in configs if c.grouped],
        template="registry.c.j2")
    out["kernels.txt"] = "".join("%s\t%s\t%s\n" % (c.name, c.arch.value, kernel_file(c))
                                 for c in configs)
    out["heuristic_rules.c"] = render_rules(rules, env)
    return out


def emit(configs: Iterable[Config], out_dir: str,
         env: Optional[jinja2.Environment] = None) -> Tuple[List[str], List[str]]:
    """Render into out_dir; returns (written, removed) file name lists."""
    os.makedirs(out_dir, exist_ok=True)
    files = render_all(configs, env)
    written = [name for name, text in sorted(files.items())
               if write_if_different(os.path.join(out_dir, name), text)]
    removed = []
    for name in sorted(os.listdir(out_dir)):
        if name not in files and name.endswith(GENERATED_SUFFIXES):
            os.remove(os.path.join(out_dir, name))
            removed.append(name)
    return written, removed

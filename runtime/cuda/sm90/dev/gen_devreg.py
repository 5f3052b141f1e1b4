#!/usr/bin/env python3
"""Emit the sm90 kernels matching a filter (generator rules) for the dev harness:
    gen_devreg.py OUT_DIR 'pattern1,pattern2'
writes OUT_DIR/<name>.cu (through the real template) and OUT_DIR/dev_kernels.inc."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
from generator import filters, render  # noqa: E402
from generator.families import sm90  # noqa: E402
from generator.model import DType, QuantMode, Schedule  # noqa: E402

out, pats = sys.argv[1], filters.split_patterns(sys.argv[2])
cfgs = [c for c in sm90.enumerate() if sm90.is_valid(c)[0]]
cfgs = sorted(filters.select(cfgs, pats, [], sm90.is_default), key=lambda c: c.name)
os.makedirs(out, exist_ok=True)
env = render.environment()
lines = []
for c in cfgs:
    render.write_if_different(os.path.join(out, c.name + ".cu"),
                              env.get_template(c.template).render(k=c, template=c.template))
    lines.append("K(%s, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d)\n" % (
        c.name, c.dtype == DType.BF16, list(QuantMode).index(c.mode), c.tile_n, c.tile_m, c.tile_k,
        c.cluster_n, c.cluster_m, c.schedule == Schedule.PINGPONG, c.stages, c.smem_bytes))
render.write_if_different(os.path.join(out, "dev_kernels.inc"), "".join(lines))
for c in cfgs:
    print(c.name)

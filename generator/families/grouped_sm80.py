"""Grouped (mixture-of-experts) tensor-core form: the sm80 family's mma.sync multistage GEMM over
(expert, token tile, column tile) work items found from the device offsets
(runtime/cuda/grouped/grouped_sm80.cuh). Runs on sm80 and later, sm90 included.

Tiles, warps, shared memory and validity are the sm80 family's (generator/families/sm80.py);
registered in the grouped table (``grouped``), run by ``w4a16_grouped_gemm``; no split-K.
"""
import itertools
from typing import Iterator, Tuple

from ..model import Arch, Config, DType, Family, QuantMode, Schedule, kernel_prefix
from . import sm80

FAMILY = Family.SM80
ARCH = Arch.SM80
TEMPLATE = "grouped_sm80_kernel.cu.j2"

# (tile_n, tile_m, tile_k): stages - one token tile per regime of rows per expert
TILES = {(128, 32, 128): (3,), (128, 64, 128): (3,), (256, 128, 64): (3,)}
DEFAULT = {(128, 32, 128, 3), (128, 64, 128, 3), (256, 128, 64, 3)}


def name(dtype: DType, mode: QuantMode, tn: int, tm: int, tk: int, stages: int) -> str:
    return "%s_%dx%dx%d_s%d" % (kernel_prefix(FAMILY, dtype, mode, grouped=True), tn, tm, tk, stages)


def enumerate() -> Iterator[Config]:
    for dtype, mode, (tn, tm, tk) in itertools.product(DType, QuantMode, sorted(TILES)):
        for stages in TILES[(tn, tm, tk)]:
            yield Config(name=name(dtype, mode, tn, tm, tk, stages), family=FAMILY, arch=ARCH,
                         dtype=dtype, mode=mode, tile_n=tn, tile_m=tm, tile_k=tk,
                         schedule=Schedule.MULTISTAGE, stages=stages, split_k=1,
                         threads=sm80.warps(tn, tm) * 32,
                         smem_bytes=sm80.smem_bytes(mode, tn, tm, tk, stages),
                         n_multiple=sm80.N_MULTIPLE, k_multiple=sm80.K_MULTIPLE, template=TEMPLATE,
                         grouped=True)


def is_valid(c: Config) -> Tuple[bool, str]:
    return sm80.is_valid(c)


def is_default(c: Config) -> bool:
    return (c.tile_n, c.tile_m, c.tile_k, c.stages) in DEFAULT

"""Grouped (mixture-of-experts) Hopper tensor-core form: the sm90 family's TMA + wgmma kernel with
a persistent walk over (expert, token tile, column tile) units found from the device offsets
(runtime/cuda/grouped/grouped_sm90.cuh).

Tiles, stages, shared memory and validity are the sm90 family's (generator/families/sm90.py) for
1x1x1 clusters and the cooperative schedule of two or four consumer warpgroups (pingpong, one
warpgroup's epilogue under the other's mainloop, was no faster: H100, moe_bench --sweep), with the
grouped form's epilogue (16-byte row stores; tensor stores for the tiles inside one expert's rows
were no faster), unit table and gather rows in shared memory; registered in the grouped table
(``grouped``), run by ``w4a16_grouped_gemm``; no split-K, stream-K or K pair. A rows by the
activation map or, with a row index, gathered by the producer warpgroup's gather warps.
"""
import itertools
from typing import Iterator, Tuple

from ..model import Arch, Config, DType, Family, QuantMode, Schedule, kernel_prefix
from . import sm90

FAMILY = Family.SM90
ARCH = Arch.SM90A
TEMPLATE = "grouped_sm90_kernel.cu.j2"

# (tile_n, tile_m, tile_k, consumer warpgroups): a token tile for each regime of rows per expert
# (32, 64, 96, 128, 256 and more: 96 serves the experts of 57-80 rows
# that uniform routing spreads past 64 in one pass, its last tile of at most 64 rows narrow; 256 of
# K a stage would leave it two stages); at 64 tokens two depths, 128 of K with
# the row gather (its warps feed a stage of 128 sooner) and 256 without (half the stage barriers a
# byte); at 32 the dense family's 17-32 row tile, 256 rows of four consumer warpgroups (the
# two-warpgroup one, in the full space, took 1.02-1.13x its time at 16-24 rows an expert; H100,
# bench/moe_bench.py --sweep)
TILES = ((128, 64, 128, 2), (128, 64, 256, 2), (128, 96, 128, 2), (128, 128, 128, 2), (128, 256, 64, 2),
         (256, 32, 128, 2), (256, 32, 128, 4))
DEFAULT = set(TILES) - {(256, 32, 128, 2)}


def name(dtype: DType, mode: QuantMode, tn: int, tm: int, tk: int, nc: int = 2) -> str:
    return "%s_%dx%dx%d_1x1x1_%s%s" % (kernel_prefix(FAMILY, dtype, mode, grouped=True), tn, tm, tk,
                                       Schedule.COOPERATIVE.value, "" if nc == 2 else "_wg%d" % nc)


def config(dtype: DType, mode: QuantMode, tn: int, tm: int, tk: int, nc: int = 2) -> Config:
    """The grouped Hopper kernel of one tile: the sm90 family's stages and shared memory for a
    cooperative 1x1x1 kernel of nc consumer warpgroups with the grouped form's table."""
    sched = Schedule.COOPERATIVE
    stages = sm90.stages_for(mode, tn, tm, tk, sched, nc, grouped=True)
    return Config(name=name(dtype, mode, tn, tm, tk, nc), family=FAMILY, arch=ARCH, dtype=dtype,
                  mode=mode, tile_n=tn, tile_m=tm, tile_k=tk, schedule=sched, stages=stages,
                  split_k=1, threads=sm90.threads(nc),
                  smem_bytes=sm90.smem_bytes(mode, tn, tm, tk, sched, stages, nc, grouped=True),
                  n_multiple=16, k_multiple=64, template=TEMPLATE, grouped=True)


def enumerate() -> Iterator[Config]:
    for dtype, mode, (tn, tm, tk, nc) in itertools.product(DType, QuantMode, TILES):
        yield config(dtype, mode, tn, tm, tk, nc)


def scale_chunk(c: Config) -> int:
    """Mirror of Cfg::kScaleChunk (sm90/sm90_config.cuh): the k-blocks whose scale rows one copy
    brings, more than 1 only for tile_k 256 at 16 to 32 tokens."""
    if not (c.tile_k == 256 and 16 <= c.tile_m <= 32):
        return 1
    chunk = 4
    while chunk >= 2 and not (chunk <= c.stages - 1 and c.stages % chunk != 0):
        chunk -= 1
    return chunk


def is_valid(c: Config) -> Tuple[bool, str]:
    """The sm90 family's rules and Cfg's grouped static_assert: no scale chunks (the grouped walk
    copies a unit's scale rows a k-block at a time)."""
    if scale_chunk(c) != 1:
        return False, "grouped form: no scale chunks (tile_k 256 at 16 to 32 tokens takes them)"
    return sm90.is_valid(c)


def is_default(c: Config) -> bool:
    return (c.tile_n, c.tile_m, c.tile_k, sm90.consumers(c)) in DEFAULT

"""Grouped (mixture-of-experts) decode form: a streaming pass over the weights of each expert
that has rows, tile_m token rows a pass (runtime/cuda/grouped/grouped_gemv.cuh).

Runs on sm80 and later. A CTA (256 threads) takes TILE_N weight rows of one expert over all of
K through a cp.async ring of STAGES stages: TILE_N / 16 warps along N x 8 / (TILE_N / 16) along
K, TILE_K of K an iteration. Registered in
the grouped table (``grouped``), run by ``w4a16_grouped_gemm``. N must be a multiple of TILE_N,
K of 64 (the K tail's tiles are skipped).

sm_90a schedule "tma" (runtime/cuda/grouped/grouped_gemv_tma.cuh): the dense TMA GEMV's stream
(gemv.py's tma schedule: one wave of persistent CTAs, bulk copies of the weights, the specialized
consumer) over units of (expert, R = tile_n / 16 row blocks, tile_m of the expert's rows), with the
activation rows gathered by the producer warp. Name ..._n<tile_n>_m<tile_m>_k<tile_k>_s<S>_tma as
the dense one's (tile_k = K per stage = 64 x 8 TPW / R); N % 16 and K % 64 are enough (part-full
last column blocks and stages); at most 256 experts (the CTA's unit table).
"""
import itertools
from typing import Iterator, Tuple

from ..model import Arch, Config, DType, Family, QuantMode, Schedule, check_pipeline, kernel_prefix
from .gemv import tma_min_group, tma_smem_bytes, warps_k

FAMILY = Family.GEMV
ARCH = Arch.SM80
TEMPLATE = "grouped_gemv_kernel.cu.j2"
THREADS = 256

# (tile_n, tile_m, tile_k): stages. Eight warps, tile_n / 16 along N and the rest along K; tile_m
# token rows a pass (8 or 16); stages sized so that two CTAs fit an SM with their weights in flight
TILES = {(32, 8, 256): (12,), (64, 16, 256): (6,), (128, 16, 128): (7,)}
DEFAULT = {(32, 8, 256, 12), (64, 16, 256, 6), (128, 16, 128, 7)}
SMEM_LIMIT = 227 * 1024

# tma schedule: (tile_n, tile_m, TPW, stages); two CTAs an SM where the launch's layout (its group)
# fits half an SM, else one
TMA_TILES = {(32, 8, 2, 5), (64, 8, 4, 3), (64, 8, 2, 6), (128, 8, 4, 4), (128, 8, 2, 6),
             (32, 16, 2, 4), (64, 16, 4, 3), (64, 16, 2, 6), (128, 16, 4, 4), (128, 16, 2, 6),
             (64, 4, 4, 4), (64, 4, 4, 5), (128, 4, 4, 5), (32, 4, 4, 4), (64, 8, 4, 4), (128, 8, 4, 5),
             (32, 8, 4, 3), (32, 8, 2, 6)}
# the H100 sweep's winners at decode (bench/moe_bench.py --sweep, T <= 64, the three models), all
# with 16 KB stages: 64 rows in most problems, 128 rows where K is not a multiple of 512, 32 rows
# where the 64-row units leave CTAs idle or uneven on long K (grouped.c's rule); 16 token rows a
# unit on the 64- and 128-row blocks (an expert's 9-16 rows in one pass over its weights; a unit of
# at most 8 skips the second token block's work), 8 on the 32-row block and for groups below 128
TMA_DEFAULT = {(32, 8, 4, 3), (64, 8, 4, 3), (128, 8, 4, 4), (64, 16, 4, 3), (128, 16, 4, 4)}
# (dtype, mode, tile_n) of the 16-row tiles above left out where ptxas spills at the two-CTA
# register cap: the consumer of zero points in groups (36-64 bytes) and fp16's 64-row block (4
# bytes); the selection then takes the 8-row tile
TMA_DEFAULT_M16_SPILLS = {(DType.F16, QuantMode.FINEGRAINED_SCALE_ONLY, 64)} | {
    (d, QuantMode.FINEGRAINED_SCALE_AND_ZEROS, tn) for d in DType for tn in (64, 128)}
TMA_TABLE_BYTES = (3 * 256 + 4) * 4  # W4A16_GGEMV_TMA_TABLE_BYTES
TMA_TEMPLATE = "grouped_gemv_tma_kernel.cu.j2"


def name(dtype: DType, mode: QuantMode, tn: int, tm: int, tk: int, stages: int) -> str:
    return "%s_n%d_m%d_k%d_s%d" % (kernel_prefix(FAMILY, dtype, mode, grouped=True), tn, tm, tk, stages)


def smem_bytes(mode: QuantMode, tn: int, tm: int, tk: int, stages: int) -> int:
    """Mirrors w4a16_ggemv_shape::SMEM."""
    scv = {QuantMode.PER_COLUMN_SCALE_ONLY: 0, QuantMode.FINEGRAINED_SCALE_ONLY: 1,
           QuantMode.FINEGRAINED_SCALE_AND_ZEROS: 2}[mode]
    wn, wk = tn // 16, warps_k(tn)
    stage = tn * tk // 2 + tm * (tk * 2 + 16) + scv * (tk // 32) * tn * 2
    red = (wk - 1) * wn * (tm // 8) * 32 * 16
    return max(stages * stage, red)


def tma_smem(mode: QuantMode, tn: int, tm: int, tpw: int, stages: int) -> int:
    """w4a16_ggemv_tma_smem at the smallest group the kernel takes (the size every launch asks
    for): the dense TMA GEMV's layout at M = tile_m and the unit table."""
    group = tma_min_group(tm, mode)
    return tma_smem_bytes(tn // 16, tm, stages, mode, group=group, tpw=tpw) + TMA_TABLE_BYTES


def tma_name(dtype: DType, mode: QuantMode, tn: int, tm: int, tk: int, stages: int) -> str:
    return "%s_n%d_m%d_k%d_s%d_tma" % (kernel_prefix(FAMILY, dtype, mode, grouped=True), tn, tm, tk, stages)


def enumerate() -> Iterator[Config]:
    for dtype, mode, (tn, tm, tpw, stages) in itertools.product(DType, QuantMode, sorted(TMA_TILES)):
        tk = 64 * 8 * tpw // (tn // 16)
        yield Config(name=tma_name(dtype, mode, tn, tm, tk, stages), family=FAMILY, arch=Arch.SM90A,
                     dtype=dtype, mode=mode, tile_n=tn, tile_m=tm, tile_k=tk,
                     schedule=Schedule.GEMV_TMA, stages=stages, split_k=1, threads=THREADS,
                     smem_bytes=tma_smem(mode, tn, tm, tpw, stages), min_group=tma_min_group(tm, mode),
                     n_multiple=16, k_multiple=64, template=TMA_TEMPLATE, grouped=True)
    for dtype, mode, (tn, tm, tk) in itertools.product(DType, QuantMode, sorted(TILES)):
        for stages in TILES[(tn, tm, tk)]:
            yield Config(name=name(dtype, mode, tn, tm, tk, stages), family=FAMILY, arch=ARCH,
                         dtype=dtype, mode=mode, tile_n=tn, tile_m=tm, tile_k=tk,
                         schedule=Schedule.GEMV, stages=stages, split_k=1, threads=THREADS,
                         smem_bytes=smem_bytes(mode, tn, tm, tk, stages), n_multiple=0,
                         k_multiple=64, template=TEMPLATE, grouped=True)


def is_valid(c: Config) -> Tuple[bool, str]:
    """Mirror of w4a16_ggemv_shape's (tma: w4a16_ggemv_tma_kernel's) static_asserts."""
    if c.schedule == Schedule.GEMV_TMA:
        if c.tile_n // 16 not in (2, 4, 8) or c.tile_n % 16 or c.tile_k * c.tile_n not in (8192 * 4, 8192 * 2):
            return False, "tma: tile_n = 16 x (2, 4 or 8) and 16 or 8 KB of weights per stage"
        if c.tile_m not in (4, 8, 16):
            return False, "tma: tile_m must be 4, 8 or 16"
        if c.smem_bytes > SMEM_LIMIT:
            return False, "tma: shared memory %d > %d" % (c.smem_bytes, SMEM_LIMIT)
        return True, ""
    if c.tile_n not in (32, 64, 128):
        return False, "tile_n must be 32, 64 or 128 (2, 4 or 8 warps along N)"
    if c.tile_m not in (8, 16):
        return False, "tile_m must be 8 or 16"
    wk = warps_k(c.tile_n)
    if c.tile_k % (64 * wk) or c.tile_k < 64 * wk:
        return False, "tile_k must be a multiple of 64 x the warps along K"
    if (c.tile_n * c.tile_k // 32) % THREADS:
        return False, "weight copies do not split over the threads"
    return check_pipeline(c, SMEM_LIMIT)


def is_default(c: Config) -> bool:
    if c.schedule == Schedule.GEMV_TMA:
        if c.tile_m == 16 and (c.dtype, c.mode, c.tile_n) in TMA_DEFAULT_M16_SPILLS:
            return False
        return (c.tile_n, c.tile_m, c.tile_k * c.tile_n // 8192, c.stages) in TMA_DEFAULT
    return (c.tile_n, c.tile_m, c.tile_k, c.stages) in DEFAULT

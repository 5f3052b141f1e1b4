"""Grouped (mixture-of-experts) decode form: a streaming pass over the weights of each expert
that has rows, tile_m token rows a pass (runtime/cuda/grouped/grouped_gemv.cuh).

Runs on sm80 and later. A CTA (256 threads) takes TILE_N weight rows of one expert over all of
K through a cp.async ring of STAGES stages: TILE_N / 16 warps along N x 8 / (TILE_N / 16) along
K, TILE_K of K an iteration. Registered in
the grouped table (``grouped``), run by ``w4a16_grouped_gemm``. N must be a multiple of TILE_N,
K of 64 (the K tail's tiles are skipped).
"""
import itertools

from ..model import Arch, Config, DType, Family, QuantMode, Schedule, kernel_prefix
from .gemv import warps_k

FAMILY = Family.GEMV
ARCH = Arch.SM80
TEMPLATE = "grouped_gemv_kernel.cu.j2"
THREADS = 256

# (tile_n, tile_m, tile_k): stages. Eight warps, tile_n / 16 along N and the rest along K; tile_m
# token rows a pass (8 or 16); stages sized so that two CTAs fit an SM with their weights in flight
TILES = {(32, 8, 256): (12,), (64, 16, 256): (6,), (128, 16, 128): (7,)}
DEFAULT = {(32, 8, 256, 12), (64, 16, 256, 6), (128, 16, 128, 7)}
SMEM_LIMIT = 227 * 1024


def name(dtype, mode, tn, tm, tk, stages):
    return "%s_n%d_m%d_k%d_s%d" % (kernel_prefix(FAMILY, dtype, mode, grouped=True), tn, tm, tk, stages)


def smem_bytes(mode, tn, tm, tk, stages):
    """Mirrors w4a16_ggemv_shape::SMEM."""
    scv = {QuantMode.PER_COLUMN_SCALE_ONLY: 0, QuantMode.FINEGRAINED_SCALE_ONLY: 1,
           QuantMode.FINEGRAINED_SCALE_AND_ZEROS: 2}[mode]
    wn, wk = tn // 16, warps_k(tn)
    stage = tn * tk // 2 + tm * (tk * 2 + 16) + scv * (tk // 32) * tn * 2
    red = (wk - 1) * wn * (tm // 8) * 32 * 16
    return max(stages * stage, red)


def enumerate():
    for dtype, mode, (tn, tm, tk) in itertools.product(DType, QuantMode, sorted(TILES)):
        for stages in TILES[(tn, tm, tk)]:
            yield Config(name=name(dtype, mode, tn, tm, tk, stages), family=FAMILY, arch=ARCH,
                         dtype=dtype, mode=mode, tile_n=tn, tile_m=tm, tile_k=tk,
                         schedule=Schedule.GEMV, stages=stages, split_k=1, threads=THREADS,
                         smem_bytes=smem_bytes(mode, tn, tm, tk, stages), n_multiple=0,
                         k_multiple=64, template=TEMPLATE, grouped=True)


def is_valid(c):
    """Mirror of w4a16_ggemv_shape's static_asserts."""
    if c.tile_n not in (32, 64, 128):
        return False, "tile_n must be 32, 64 or 128 (2, 4 or 8 warps along N)"
    if c.tile_m not in (8, 16):
        return False, "tile_m must be 8 or 16"
    wk = warps_k(c.tile_n)
    if c.tile_k % (64 * wk) or c.tile_k < 64 * wk:
        return False, "tile_k must be a multiple of 64 x the warps along K"
    if (c.tile_n * c.tile_k // 32) % THREADS:
        return False, "weight copies do not split over the threads"
    if c.stages < 2:
        return False, "at least 2 stages"
    if c.smem_bytes > SMEM_LIMIT:
        return False, "shared memory %d > %d" % (c.smem_bytes, SMEM_LIMIT)
    return True, ""


def is_default(c):
    return (c.tile_n, c.tile_m, c.tile_k, c.stages) in DEFAULT

"""sm80-class family: mma.sync.m16n8k16 + ldmatrix + cp.async multistage.

Weights are mma's A operand (16 rows of N per instruction), activations its B
operand (8 tokens per instruction). Device code: runtime/cuda/sm80/.
"""
import itertools

from ..model import Arch, Config, DType, Family, QuantMode, Schedule, kernel_prefix

FAMILY = Family.SM80
ARCH = Arch.SM80
TEMPLATE = "sm80_kernel.cu.j2"

# (tile_n, tile_m, tile_k, warps) - kernel orientation: N (weights) x M (tokens) x K
TILES = [
    (64, 16, 128, 4),
    (128, 16, 128, 4),
    (64, 32, 64, 4),
    (128, 64, 64, 4),
    (128, 128, 64, 8),
    (256, 128, 64, 8),
]
STAGES = [3, 4]
SMEM_LIMIT = 227 * 1024  # sm90 / sm80 opt-in limit per block is lower on sm86/89; checked at run time


def name(dtype, mode, tn, tm, tk, stages):
    return "%s_%dx%dx%d_s%d" % (kernel_prefix(FAMILY, dtype, mode), tn, tm, tk, stages)


def smem_bytes(tn, tm, tk, stages):
    # per stage: activations tm x tk (2 bytes each) + packed weights tn x tk / 2
    return stages * (tm * tk * 2 + tn * tk // 2)


def enumerate():
    for dtype, mode, (tn, tm, tk, warps), stages in itertools.product(
            DType, QuantMode, TILES, STAGES):
        yield Config(name=name(dtype, mode, tn, tm, tk, stages), family=FAMILY, arch=ARCH,
                     dtype=dtype, mode=mode, tile_n=tn, tile_m=tm, tile_k=tk,
                     schedule=Schedule.MULTISTAGE, stages=stages, split_k=16,
                     threads=warps * 32, smem_bytes=smem_bytes(tn, tm, tk, stages),
                     template=TEMPLATE)


def is_valid(c):
    if c.smem_bytes > SMEM_LIMIT:
        return False, "shared memory %d > %d" % (c.smem_bytes, SMEM_LIMIT)
    if c.tile_n % 16 or c.tile_m % 8 or c.tile_k % 64:
        return False, "tile not a multiple of the 16x8x64 fragment block"
    return True, ""


def is_default(c):
    return (c.tile_n, c.tile_m, c.tile_k, c.stages) in {
        (128, 16, 128, 4), (64, 32, 64, 4), (128, 64, 64, 3), (128, 128, 64, 3)}

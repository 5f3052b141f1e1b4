"""sm80-class family: mma.sync.m16n8k16 + ldmatrix + cp.async multistage.

Runs on sm80 and every later architecture. Weights are mma's A operand (16 rows
of N per instruction), activations its B operand (8 tokens per instruction).
Device code: runtime/cuda/sm80/gemm_sm80.cuh (this module's formulas mirror its
w4a16_sm80_cfg; the generated file static_asserts that smem_bytes agrees).

Tiles are (tile_n, tile_m, tile_k) in the kernel's orientation: N (weight rows)
x M (tokens) x K. The warp count is derived from the tile (8 warps for the big
tiles, 4 otherwise); the warp layout inside the CTA is derived in the header
(warp tile WN x WM with WM = min(tile_m, 64)).
"""
import itertools
from typing import Iterator, Tuple

from ..model import Arch, Config, DType, Family, QuantMode, Schedule, check_pipeline, kernel_prefix

FAMILY = Family.SM80
ARCH = Arch.SM80
TEMPLATE = "sm80_kernel.cu.j2"

# (tile_n, tile_m, tile_k): stages - kernel orientation: N (weights) x M (tokens) x K.
# Exactly the set verified on an H100 (docs/PERFORMANCE.md, sm80 section).
TILES = {
    (64, 16, 128): (3, 4),     # decode, small N (with split-K)
    (128, 16, 128): (3, 4),    # decode / M <= 16: the memory-bound workhorse
    (256, 16, 128): (3, 4),
    (128, 32, 128): (3, 4),    # M 17..64 on small N
    (256, 32, 128): (3,),      # M 17..32 on large N
    (128, 64, 64): (3, 4),
    (128, 64, 128): (3,),      # M ~ 64..256
    (256, 64, 64): (3, 4),
    (256, 64, 128): (3,),
    (128, 128, 64): (3, 4),
    (128, 128, 128): (3,),
    (256, 128, 64): (3, 4),    # large M
    (256, 128, 128): (3,),     # large M: 1-8% faster than 256x128x64_s3, a few spilled words
}
# Largest split_k the runtime may choose (gridDim.z slices, splitk.cuh protocol);
# the runtime also keeps (K / tile_k) % split_k == 0.
MAX_SPLIT_K = 16
# N and K tails: the kernel predicates the last row tile's 16-row blocks beyond N and the last K
# tile's 64-wide blocks beyond K (gemm_sm80.cuh), so any N % 16 == 0, K % 64 == 0 runs
N_MULTIPLE = 16
K_MULTIPLE = 64
SMEM_LIMIT = 227 * 1024  # opt-in limit per block on sm80/sm90 (sm86/sm89 allow less: checked at launch)

# The default (CI) build: one tile per M regime, fastest spill-free measured on H100
# (docs/PERFORMANCE.md): 6 instantiations each (2 dtypes x 3 modes).
DEFAULT = {(128, 16, 128, 3), (128, 32, 128, 3), (128, 64, 128, 3), (256, 128, 64, 3)}


def name(dtype: DType, mode: QuantMode, tn: int, tm: int, tk: int, stages: int) -> str:
    return "%s_%dx%dx%d_s%d" % (kernel_prefix(FAMILY, dtype, mode), tn, tm, tk, stages)


def warps(tn: int, tm: int) -> int:
    return 8 if tn >= 256 or tm >= 128 else 4


def scale_arrays(mode: QuantMode) -> int:
    """Scale (and zero) arrays staged per pipeline stage; per-column scales go to the epilogue."""
    return {QuantMode.PER_COLUMN_SCALE_ONLY: 0, QuantMode.FINEGRAINED_SCALE_ONLY: 1,
            QuantMode.FINEGRAINED_SCALE_AND_ZEROS: 2}[mode]


def smem_bytes(mode: QuantMode, tn: int, tm: int, tk: int, stages: int) -> int:
    """Dynamic shared memory: max(pipeline, epilogue staging). Mirrors w4a16_sm80_cfg::kSmem."""
    stage = tn * tk // 2 + tm * tk * 2 + scale_arrays(mode) * (tk // 32) * tn * 2
    epilogue = tm * (tn + 8) * 2
    return max(stages * stage, epilogue)


def enumerate() -> Iterator[Config]:
    for dtype, mode, (tn, tm, tk) in itertools.product(DType, QuantMode, sorted(TILES)):
        for stages in TILES[(tn, tm, tk)]:
            yield Config(name=name(dtype, mode, tn, tm, tk, stages), family=FAMILY, arch=ARCH,
                         dtype=dtype, mode=mode, tile_n=tn, tile_m=tm, tile_k=tk,
                         schedule=Schedule.MULTISTAGE, stages=stages, split_k=MAX_SPLIT_K,
                         threads=warps(tn, tm) * 32, smem_bytes=smem_bytes(mode, tn, tm, tk, stages),
                         n_multiple=N_MULTIPLE, k_multiple=K_MULTIPLE, template=TEMPLATE)


def is_valid(c: Config) -> Tuple[bool, str]:
    """Mirror of the header's static_asserts (so an invalid tile never reaches nvcc)."""
    nwarps = c.threads // 32
    wm = min(c.tile_m, 64)
    warps_m = c.tile_m // wm if c.tile_m % wm == 0 else 0
    if c.tile_m % 16 or c.tile_k % 64 or c.tile_n % 64:
        return False, "tile must be a multiple of 64 (N) x 16 (M) x 64 (K)"
    if warps_m == 0 or nwarps % warps_m:
        return False, "token tile does not split over the warps"
    warps_n = nwarps // warps_m
    if c.tile_n % (16 * warps_n):
        return False, "each warp needs a multiple of 16 weight rows"
    if (c.tile_n * c.tile_k // 32) % c.threads or c.threads % (c.tile_k // 2) or \
            c.threads % (c.tile_k // 8) or c.threads % (c.tile_n // 8):
        return False, "copies do not split evenly over the threads"
    return check_pipeline(c, SMEM_LIMIT)


def is_default(c: Config) -> bool:
    return (c.tile_n, c.tile_m, c.tile_k, c.stages) in DEFAULT

"""Hopper family: TMA + wgmma, warp-specialized (cooperative, pingpong), clusters.

Weights are wgmma's register operand A (tile_n = rows of N, 64 per wgmma per consumer
warpgroup), activations reach shared memory by TMA and are operand B (tile_m = tokens =
wgmma N). Device code: runtime/cuda/sm90/gemm_sm90.cuh (the shared-memory arithmetic
below mirrors Cfg in sm90/sm90_config.cuh; keep the two in step).

Name: w4a16_sm90_<dtype>_u4_<mode>_<TN>x<TM>x<TK>_<CN>x<CM>x1_<schedule>[_wg4]
(tile and cluster in the kernel's orientation: N x M x K; "_wg4": the cooperative schedule with
four consumer warpgroups instead of two, 640 threads). Stages are derived from the
shared-memory budget, not enumerated.
"""
import itertools
from typing import Iterator, Tuple

from ..model import Arch, Config, DType, Family, QuantMode, Schedule, kernel_prefix

FAMILY = Family.SM90
ARCH = Arch.SM90A
TEMPLATE = "sm90_kernel.cu.j2"

TILE_N = (64, 128, 256)
TILE_M = (8, 16, 32, 64, 128, 256)
TILE_K = (64, 128, 256)  # 256: 3-D weight map, no weight multicast (cluster_m 1)
CLUSTERS = ((1, 1), (2, 1), (1, 2), (2, 2))  # (along N, along M)
SCHEDULES = (Schedule.COOPERATIVE, Schedule.PINGPONG)
CONSUMERS = (2, 4)        # consumer warpgroups: 2 (both schedules) or 4 (cooperative only)
SMEM_LIMIT = 232448       # 227 KB: the opt-in limit per block on sm90
MAX_STAGES = 8            # more stages = more weight bytes in flight (decode, M ~ 64)
MIN_STAGES = 2
# Largest split_k the runtime may choose. The kernel slices K unevenly (any split <= K/tile_k)
# and the launch plan (runtime/plan.c) picks the largest split that keeps tiles x split within one wave
# of SMs; 12 (not a power of two) so that the GPU test's one-tile problems (K/tile_k = 16)
# run uneven slices. Slices write fp32 partials; the launch enqueues common/splitk.cuh's reduction.
MAX_SPLIT_K = 12
# N and K tails (n_multiple 16, k_multiple 64) on the 1x1x1 clusters: the last row tile and k-block
# may be part-full (the weight, activation and scale maps' exact extents load zeros beyond N and K,
# the tensor stores drop columns beyond N, the other stores are predicated; gemm_sm90.cuh). The
# clusters keep whole tiles: a CTA of a multicast cluster beyond N would still have to take part.
REG_BUDGET = 208          # of setmaxnreg's 232: above ~208 ptxas serializes the wgmmas (C7512)
# Four consumer warpgroups: 640 threads launch with 96 registers each (64K / 640, in units of 8),
# the producer gives back to 40 and each consumer rises to 104 (Cfg::consumer_regs). The estimate
# overshoots by ~16 there (ptxas -v: 256x32x128 estimate 104, no spills; 256x64x128 estimate 120,
# a few spilled words outside the k-block loop).
REG_BUDGET_WG4 = 120
# Two CTAs per SM (the next kernel's CTA can be resident and prefetch its weights while this
# one streams) for register-light tiles: consumers get 96 registers (setmaxnreg); the estimate
# below overshoots ptxas here (128x16x64: estimate 72, 68 used; no spills in ptxas -v); each
# CTA gets at most half an SM's 228 KB (1 KB reserved per CTA).
# Keep in step with Cfg::kCtasPerSm in sm90/sm90_config.cuh.
LIGHT_REGS = 96
SMEM_HALF_SM = 233472 // 2 - 1024
MAX_STAGES_2 = 16         # half an SM of small stages: more of them keep the bytes in flight
MIN_STAGES_2 = 4

# Default build set (CI-sized): the tiles that won the H100 bench
# (docs/PERFORMANCE.md), every mode and dtype where valid. 256x64x128 has no
# zero-point variant (registers); 128x64x128 stands in for it there.
DEFAULT_TILES = {
    (256, 16, 128, 1, 1, Schedule.COOPERATIVE),   # decode / small M: memory-bound
    (256, 32, 128, 1, 1, Schedule.COOPERATIVE),   # M = 17..32 (2-15% ahead of 256x64 there)
    (256, 64, 128, 1, 1, Schedule.COOPERATIVE),   # M ~ 64
    (128, 128, 128, 1, 1, Schedule.COOPERATIVE),  # M ~ 256..1024 on narrow layers
    (128, 256, 64, 1, 1, Schedule.COOPERATIVE),   # large M
    # large M with the activation tile multicast to two CTAs along N: under sustained load (the
    # GPU at its 700 W limit, ~1.4 GHz) 2.5-5 % faster than 1x1x1 at M = 1024 / 4096 on 7 of the
    # 8 layers; the cost model counts its halved L2 reads
    (128, 256, 64, 2, 1, Schedule.COOPERATIVE),
    # M = 17..64: 256 k per stage (32 KB / 48 KB stages, 6 / 4 of them); tile by tile 3-7 % ahead
    # of the 128-k tiles on 5 (M = 32) and 4 (M = 64) of the 8 layers, and with stream-K from
    # M = 17 (runtime/families.c) the best sm90 class at M = 17..64 on all eight (H100)
    (128, 32, 256, 1, 1, Schedule.COOPERATIVE),
    (128, 64, 256, 1, 1, Schedule.COOPERATIVE),
    # M <= 16 on the layers of 64-80 tiles of 128 rows (8192x8192, 10240x8192: a wave of 256-row
    # tiles is a quarter full): 128x16x256 with the K pair (8192x8192 M = 16 15.5 us against 18.0 for
    # 256x16x128), 128x16x128 with split-K (10240x8192 M = 16 20.6 against 22.0) (H100)
    (128, 16, 256, 1, 1, Schedule.COOPERATIVE),
    (128, 16, 128, 1, 1, Schedule.COOPERATIVE),
    # M <= 8 (wgmma N = 8): 128x8x256 streams 10240x8192 (stream-K) 2.4-2.9 % faster than 128x16x256
    # at M = 1 and 8, 57344x8192 0.5-1.4 % (it loses on the K-pair layers, 8192x8192 5-7 %); H100
    (128, 8, 256, 1, 1, Schedule.COOPERATIVE),
}
DEFAULT_ZERO_POINT_TILES = {
    (128, 64, 128, 1, 1, Schedule.COOPERATIVE),
}
# Four consumer warpgroups (cooperative, "_wg4"), every mode and dtype: 256x32x128 is 3-11 % faster
# than with two and 7-10 % ahead of 128x32x256 on 28672x4096 at M = 17..32 (H100; the heuristic's
# "-wg4" row)
DEFAULT_WG4_TILES = {
    (256, 32, 128, 1, 1, Schedule.COOPERATIVE),
}


def name(dtype: DType, mode: QuantMode, tn: int, tm: int, tk: int, cn: int, cm: int, sched: Schedule,
         nc: int = 2) -> str:
    return "%s_%dx%dx%d_%dx%dx1_%s%s" % (kernel_prefix(FAMILY, dtype, mode), tn, tm, tk, cn, cm, sched.value,
                                        "" if nc == 2 else "_wg%d" % nc)


def threads(nc: int) -> int:
    return 128 * (nc + 1)


def consumers(c: Config) -> int:
    """Consumer warpgroups of a config (threads = 128 x (consumers + 1))."""
    return c.threads // 128 - 1


def _round(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def stage_bytes(mode: QuantMode, tn: int, tm: int, tk: int) -> int:
    zeros = mode == QuantMode.FINEGRAINED_SCALE_AND_ZEROS
    raw = tm * tk * 2 + tn * tk // 2 + (tk // 32) * tn * 2 * (2 if zeros else 1)
    return _round(raw, 1024)


# The grouped form's unit table and the gather warps' row addresses (Cfg::kTableBytes: 3 x 256 + 1
# ints padded to 772, then tile_m pointers)
GROUPED_TABLE_INTS = (3 * 256 + 1) // 4 * 4 + 4


def grouped_table_bytes(tm: int) -> int:
    return GROUPED_TABLE_INTS * 4 + tm * 8


def epilogue_bytes(tn: int, tm: int, sched: Schedule, grouped: bool = False) -> int:
    # TM >= 64 (not the grouped form): dense swizzled boxes for the TMA store; else rows padded by 8
    # elements
    per = tm * tn * 2 if tm >= 64 and not grouped else tm * (tn + 8) * 2
    return (1 if sched == Schedule.COOPERATIVE else 2) * per


def _fixed_bytes(tn: int, tm: int, sched: Schedule, grouped: bool = False) -> int:
    # epilogue staging, 2 order barriers, the grouped form's table, 1024 bytes of alignment slack
    return (_round(epilogue_bytes(tn, tm, sched, grouped), 16) + 16 + (grouped_table_bytes(tm) if grouped else 0)
            + 1024)


def smem_bytes(mode: QuantMode, tn: int, tm: int, tk: int, sched: Schedule, stages: int, nc: int = 2,
               grouped: bool = False) -> int:
    # stages + a full and an empty barrier per stage; a one-CTA-per-SM tile asks for more than
    # half an SM (Cfg::kSmemBytes), so smem_bytes <= SMEM_HALF_SM <=> two CTAs per SM
    raw = stages * (stage_bytes(mode, tn, tm, tk) + 16) + _fixed_bytes(tn, tm, sched, grouped)
    if raw <= SMEM_HALF_SM and ctas_per_sm(mode, tn, tm, tk, sched, nc, grouped) == 1:
        return SMEM_HALF_SM + 1024
    return raw


def _fit(mode: QuantMode, tn: int, tm: int, tk: int, sched: Schedule, limit: int, most: int,
         grouped: bool = False) -> int:
    per = stage_bytes(mode, tn, tm, tk) + 16
    return max(0, min(most, (limit - _fixed_bytes(tn, tm, sched, grouped)) // per))


def ctas_per_sm(mode: QuantMode, tn: int, tm: int, tk: int, sched: Schedule, nc: int = 2,
                grouped: bool = False) -> int:
    """2 for register-light tiles of two consumer warpgroups with >= MIN_STAGES_2 stages in half
    an SM, else 1."""
    if nc != 2 or consumer_registers(mode, tn, tm, tk, sched) > LIGHT_REGS:
        return 1
    return 2 if _fit(mode, tn, tm, tk, sched, SMEM_HALF_SM, MAX_STAGES_2, grouped) >= MIN_STAGES_2 else 1


def stages_for(mode: QuantMode, tn: int, tm: int, tk: int, sched: Schedule, nc: int = 2,
               grouped: bool = False) -> int:
    if ctas_per_sm(mode, tn, tm, tk, sched, nc, grouped) == 2:
        return _fit(mode, tn, tm, tk, sched, SMEM_HALF_SM, MAX_STAGES_2, grouped)
    return _fit(mode, tn, tm, tk, sched, SMEM_LIMIT, MAX_STAGES, grouped)


def consumer_registers(mode: QuantMode, tn: int, tm: int, tk: int, sched: Schedule, nc: int = 2) -> int:
    """Estimate of the live registers of a consumer thread (accumulators, converted A
    fragments, packed words, scales) plus addressing; ptxas -v has the last word."""
    rows = tn // nc if sched == Schedule.COOPERATIVE else tn
    r = rows // 64
    zeros = mode == QuantMode.FINEGRAINED_SCALE_AND_ZEROS
    return r * tm // 2 + r * (tk // 16) * 4 + r * (tk // 64) * 4 + r * (tk // 16) * (2 if zeros else 1) + 40


def enumerate() -> Iterator[Config]:
    for dtype, mode, tn, tm, tk, (cn, cm), sched, nc in itertools.product(
            DType, QuantMode, TILE_N, TILE_M, TILE_K, CLUSTERS, SCHEDULES, CONSUMERS):
        if nc != 2 and sched != Schedule.COOPERATIVE:
            continue
        stages = stages_for(mode, tn, tm, tk, sched, nc)
        tails = (cn, cm) == (1, 1)
        yield Config(name=name(dtype, mode, tn, tm, tk, cn, cm, sched, nc), family=FAMILY, arch=ARCH,
                     dtype=dtype, mode=mode, tile_n=tn, tile_m=tm, tile_k=tk,
                     cluster_n=cn, cluster_m=cm, cluster_k=1, schedule=sched, stages=stages,
                     split_k=MAX_SPLIT_K, threads=threads(nc),
                     smem_bytes=smem_bytes(mode, tn, tm, tk, sched, stages, nc),
                     n_multiple=16 if tails else 0, k_multiple=64 if tails else 0, template=TEMPLATE)


def is_valid(c: Config) -> Tuple[bool, str]:
    nc = consumers(c)
    rows = c.tile_n // nc if c.schedule == Schedule.COOPERATIVE else c.tile_n
    if rows < 64 or rows % 64:
        return False, "each consumer warpgroup needs a multiple of 64 rows (wgmma M)"
    if (c.tile_m // c.cluster_n) % 8:
        return False, "activation multicast slice is not whole 8-row swizzle atoms"
    if (c.tile_n // 16) % c.cluster_m:
        return False, "weight multicast slice is not whole 16-row blocks"
    if c.tile_k == 256 and c.cluster_m > 1:
        return False, "tile_k 256: no weight multicast (cluster_m 1)"
    if c.stages < MIN_STAGES:
        return False, "fewer than %d stages fit in shared memory" % MIN_STAGES
    if c.smem_bytes > SMEM_LIMIT:
        return False, "shared memory %d > %d" % (c.smem_bytes, SMEM_LIMIT)
    regs = consumer_registers(c.mode, c.tile_n, c.tile_m, c.tile_k, c.schedule, nc)
    budget = REG_BUDGET if nc == 2 else REG_BUDGET_WG4
    if regs > budget:
        return False, "consumer registers ~%d > %d" % (regs, budget)
    return True, ""


def is_default(c: Config) -> bool:
    key = (c.tile_n, c.tile_m, c.tile_k, c.cluster_n, c.cluster_m, c.schedule)
    if consumers(c) != 2:
        return consumers(c) == 4 and key in DEFAULT_WG4_TILES
    if key in DEFAULT_TILES:
        return True
    return c.mode == QuantMode.FINEGRAINED_SCALE_AND_ZEROS and key in DEFAULT_ZERO_POINT_TILES

"""Decode family (M <= 16): one streaming pass over the packed weights.
Device code: runtime/cuda/gemv/gemv.cuh (its header comment explains the kernel).

Name: w4a16_gemv_<dtype>_u4_<mode>_n<N>_m<M>_k<K>_s<S>_sk<Z>, in the kernel's orientation
(generator/model.py):
  n<N>   tile_n: weight rows (N of the problem) per CTA; N % tile_n == 0. A CTA is 8 warps,
         each owning one 16-row block along N, so tile_n / 16 warps run along N and
         128 / tile_n along K (the K split inside a CTA, summed in shared memory in a fixed order)
  m<M>   tile_m: the largest M one launch handles, every token row batched in one pass over
         the weights (8: one mma.m16n8k16 per packed word; 16: two); M <= tile_m
  k<K>   tile_k: K per CTA iteration = 64 x warps along K x 64-wide tiles per warp per iteration
         (1 or 2); K % tile_k == 0
  s<S>   stages: iterations of packed weights in flight per warp (in registers) and of
         activation slices in shared memory (cp.async)
  sk<Z>  split_k: the largest K split across CTAs (gridDim.z; fp32 partials in the workspace,
         then common/splitk.cuh's deterministic reduce) the runtime may choose; 1 = never
Group sizes 32, 64, 128, 256 (powers of two >= 32) and per-column are handled at run time.

sm_90a schedule "tma" (runtime/cuda/gemv/gemv_tma.cuh): w4a16_gemv_<dtype>_u4_<mode>_n<N>_m<M>_k<K>_s<S>_tma
  n<N>   tile_n = 16 R: R row blocks per CTA over all of K (no split); 16, 32, 64, 128
  m<M>   tile_m: 4, 8 or 16: M <= tile_m, one mma per packed word and n8 token block (the
         generic consumer adds one for the bias in bf16; gemv_tma.cuh chooses its consumer per
         call from M and the group size; tile_m 16 has only the specialized one: scale-only
         groups >= 128 and per-column)
  k<K>   tile_k = K per stage = 64 x 8 TPW / R: TPW 64-wide tiles per consumer warp and stage,
         4 (16 KB of packed weights per stage) or 2 (8 KB: finer stages, whose math can start
         earlier, for layers of one or two units per CTA)
  s<S>   stages of the shared-memory ring (TMA bulk copies; the first S are issued before
         griddepcontrol.wait, overlapping the previous kernel)
"""
import itertools
from typing import Iterator, Tuple

from ..model import Arch, Config, DType, Family, QuantMode, Schedule, check_pipeline, kernel_prefix

FAMILY = Family.GEMV
ARCH = Arch.SM80  # every listed arch >= 80 (+ PTX): mma.sync, ldmatrix, cp.async are sm80 features
TEMPLATE = "gemv_kernel.cu.j2"

# consumer threads a CTA (the descriptor's `threads`). The TMA kernels add a producer warp (288 launched)
# and ask for at least half an SM of shared memory where they do not run the next launch's CTA beside
# two of theirs (gemv_tma.cuh); the descriptors keep the consumer count and the layout's bytes, which
# the heuristic's fallback model and its tie-break (fewer threads first) are fitted on (H100);
# changing them needs the heuristic re-checked on a GPU.
THREADS = 256
WARPS = THREADS // 32
# tile_m -> rows per CTA: larger M wants more rows per CTA (the activations are re-read by
# every CTA), small N wants fewer (enough CTAs to fill the GPU without split-K)
ROWS = {8: (16, 32, 64), 16: (32, 64, 128)}
# (64-wide K tiles per warp per iteration, stages); 2 tiles halve the per-iteration overhead.
# 8 stages (1 tile) were measured too and never came within 3% of the best: dropped.
KSTEPS = [(1, 4), (2, 4)]
SPLITS = [1, 8]
SMEM_LIMIT = 99 * 1024  # within sm86/sm89's per-block opt-in limit

# sm_90a TMA schedule: row blocks per CTA x tile_m x stages. Shared memory per CTA lets two CTAs
# share an SM (the next kernel's CTAs stream beside the running ones): <= 113 KB; tile_m 16 may
# also take a whole SM (<= 226 KB) for deeper pipelines: on layers of <= one CTA per SM (4096 rows
# of 32) that is 1.3-1.5x faster (two stages of 48 KB cannot hide the latency), and the launch
# caps its grid at one CTA per SM.
TMA_ROWS = (1, 2, 4, 8)
TMA_TILE_M = (4, 8, 16)  # shared memory grows with M (activation rows): tile_m 4 lets 16-row CTAs fit;
# tile_m 16 (two n8 token blocks) was 1.5-3x slower than the register-staged kernels at M = 16 with
# the generic consumer; the specialized one (fine-grained groups >= 128, per-column) dequantizes each
# weight fragment once for both blocks
TMA_STAGES = (2, 3, 4)  # 2: tile_m 8 on 16-row CTAs fits two CTAs per SM
TMA_TPW = (4, 2)  # 64-wide tiles per consumer warp and stage: 16 or 8 KB of weights per stage
TMA_SMEM_LIMIT = 113 * 1024
TMA_SMEM_LIMIT_1 = 226 * 1024  # tile_m 16, one CTA per SM
# (tile_n, tile_m, TPW, stages): the H100 winners at M <= 8, at M = 9..16, and with 8 KB stages on
# 4096x4096 (M = 1: n16_m8_k1024_s4; M = 2..8: n16_m8_k1024_s2)
TMA_DEFAULT = {(16, 4, 4, 3), (16, 8, 4, 2), (32, 4, 4, 4), (32, 8, 4, 3), (128, 8, 4, 4),
               (32, 16, 4, 2), (32, 16, 4, 3), (64, 16, 4, 3),
               (16, 8, 2, 2), (16, 8, 2, 4)}
# ... and for scale-only and per-column only: n32_m16_k512_s4 (8 KB stages, four of them) for M = 9..16
# on 6144x4096, 7.49-7.53 against 7.74-7.78 us for n32_m16_k1024_s2 at M = 16 (bf16 group 128), which
# keeps that layer's M = 16 within 1.5x of its M = 1 (issue 4; H100). Its
# zero-point consumer spills 8 bytes (ptxas -v), and the heuristic's row for it is scale-only and
# per-column (runtime/select.c).
TMA_DEFAULT_NO_ZEROS = {(32, 16, 2, 4)}

# default (CI) set, per dtype x mode: (tile_n, tile_m, tile_k, stages, split_k) that won the
# H100 sweep of docs/PERFORMANCE.md on the Llama-3 layers: M <= 8 on 16 rows (small N; 1 or 2
# tiles per warp and iteration; may split K for tiny N), on 32 rows (M <= 4, mid/large N);
# M <= 16 on 32 rows (N = 4096), 64 rows (M = 8..16, mid N) and 128 rows (M = 16, large N;
# may split K for small N).
DEFAULT = {(16, 8, 512, 4, 8), (16, 8, 1024, 4, 8), (32, 8, 512, 4, 1), (32, 16, 512, 4, 1),
           (64, 16, 256, 4, 8), (128, 16, 128, 4, 8)}


def warps_k(tile_n: int) -> int:
    """Warps along K of a CTA with tile_n rows (one 16-row block per warp along N)."""
    return WARPS * 16 // tile_n


def name(dtype: DType, mode: QuantMode, tn: int, tm: int, tk: int, stages: int, split: int) -> str:
    return "%s_n%d_m%d_k%d_s%d_sk%d" % (kernel_prefix(FAMILY, dtype, mode), tn, tm, tk, stages, split)


def smem_bytes(tn: int, tm: int, tk: int, stages: int, mode: QuantMode) -> int:
    """Dynamic shared memory per CTA (w4a16_gemv_shape::SMEM_BYTES in runtime/cuda/gemv/gemv.cuh):
    per stage tile_m x (tile_k x 2 + 16) bytes of activations plus, per warp, 64 bytes of scales
    (and as many of zeros) per 64-wide tile; or the K-slice reduction buffer if that is larger."""
    wk = warps_k(tn)
    u = tk // (64 * wk)
    vectors = {QuantMode.PER_COLUMN_SCALE_ONLY: 0, QuantMode.FINEGRAINED_SCALE_ONLY: 1,
               QuantMode.FINEGRAINED_SCALE_AND_ZEROS: 2}[mode]
    stage = tm * (tk * 2 + 16) + WARPS * u * 64 * vectors
    red = (wk - 1) * (WARPS // wk) * (tm // 8) * 32 * 16
    return max(stages * stage, red)


def tma_smem_bytes(rows: int, tm: int, stages: int, mode: QuantMode, group: int = 32, tpw: int = 4) -> int:
    """w4a16_gemv_tma_layout_of (runtime/cuda/gemv/gemv_tma.cuh) at M = tile_m and the given group:
    per stage 4 TPW KB of weights, tile_m activation rows of 64 x 8 TPW / rows x 2 bytes and the
    stage's scale (zero) rows, rounded to 1024; the row-block reduction buffer; two 8-byte
    barriers per stage; 1024 bytes of alignment slack."""
    tt = 8 * tpw // rows
    vectors = {QuantMode.PER_COLUMN_SCALE_ONLY: 0, QuantMode.FINEGRAINED_SCALE_ONLY: 1,
               QuantMode.FINEGRAINED_SCALE_AND_ZEROS: 2}[mode]
    gps = max(1, 64 * tt // group) if vectors else 0
    stage = 4096 * tpw + tm * tt * 128 + gps * rows * 32 * vectors
    stage = (stage + 1023) // 1024 * 1024
    red = (8 - rows) * ((tm + 7) // 8) * 512  # the non-leading warps of each row block
    return stage * stages + red + 16 * stages + 1024  # + barriers + alignment slack of the base


def tma_min_group(tm: int, mode: QuantMode) -> int:
    """tile_m 16 runs only the specialized consumer (two n8 token blocks per dequantized
    fragment): fine-grained groups of at least 128 (and per-column); the generic one spills there
    and is 1.5-3x slower than the register-staged kernels, so smaller groups are refused."""
    return 128 if tm == 16 and mode != QuantMode.PER_COLUMN_SCALE_ONLY else 32


def tma_name(dtype: DType, mode: QuantMode, tn: int, tm: int, tk: int, stages: int) -> str:
    return "%s_n%d_m%d_k%d_s%d_tma" % (kernel_prefix(FAMILY, dtype, mode), tn, tm, tk, stages)


def enumerate() -> Iterator[Config]:
    for dtype, mode, tpw, rows, tm, stages in itertools.product(DType, QuantMode, TMA_TPW, TMA_ROWS, TMA_TILE_M,
                                                                TMA_STAGES):
        tn, tk = 16 * rows, 64 * 8 * tpw // rows
        yield Config(name=tma_name(dtype, mode, tn, tm, tk, stages), family=FAMILY, arch=Arch.SM90A,
                     dtype=dtype, mode=mode, tile_n=tn, tile_m=tm, tile_k=tk, schedule=Schedule.GEMV_TMA,
                     stages=stages, split_k=1, threads=THREADS,
                     smem_bytes=tma_smem_bytes(rows, tm, stages, mode, tpw=tpw),
                     min_group=tma_min_group(tm, mode), template="gemv_tma_kernel.cu.j2")
    for dtype, mode, tm, (u, stages), split in itertools.product(DType, QuantMode, ROWS, KSTEPS, SPLITS):
        for tn in ROWS[tm]:
            tk = 64 * warps_k(tn) * u
            yield Config(name=name(dtype, mode, tn, tm, tk, stages, split), family=FAMILY, arch=ARCH,
                         dtype=dtype, mode=mode, tile_n=tn, tile_m=tm, tile_k=tk,
                         schedule=Schedule.GEMV, stages=stages, split_k=split, threads=THREADS,
                         smem_bytes=smem_bytes(tn, tm, tk, stages, mode), min_group=32, template=TEMPLATE)


def is_valid(c: Config) -> Tuple[bool, str]:
    if c.schedule == Schedule.GEMV_TMA:
        if c.tile_n // 16 not in TMA_ROWS or c.tile_n % 16 or c.tile_k * c.tile_n not in (8192 * 4, 8192 * 2):
            return False, "tma: tile_n = 16 x (1, 2, 4 or 8) and 16 or 8 KB of weights per stage"
        if c.tile_m not in TMA_TILE_M:
            return False, "tma: tile_m must be 4, 8 or 16"
        limit = TMA_SMEM_LIMIT_1 if c.tile_m == 16 else TMA_SMEM_LIMIT
        if c.smem_bytes > limit:
            return False, "tma: shared memory %d > %d" % (c.smem_bytes, limit)
        return True, ""
    if c.tile_n % 16 or (WARPS * 16) % c.tile_n:
        return False, "tile_n must be 16 x a divisor of %d warps" % WARPS
    if c.tile_k % (64 * warps_k(c.tile_n)):
        return False, "tile_k must be 64 x warps along K x tiles per warp"
    if c.tile_m not in (8, 16):
        return False, "tile_m must be 8 or 16"
    return check_pipeline(c, SMEM_LIMIT)


def is_default(c: Config) -> bool:
    if c.schedule == Schedule.GEMV_TMA:
        key = (c.tile_n, c.tile_m, c.tile_k * c.tile_n // 8192, c.stages)
        return key in TMA_DEFAULT or (key in TMA_DEFAULT_NO_ZEROS and c.mode != QuantMode.FINEGRAINED_SCALE_AND_ZEROS)
    return (c.tile_n, c.tile_m, c.tile_k, c.stages, c.split_k) in DEFAULT

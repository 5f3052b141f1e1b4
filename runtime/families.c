/* families.c - can_implement, workspace size and split-K choice (host-side rules). */
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"
#include "select_internal.h"

/* the most dynamic shared memory of an sm90 kernel that runs two CTAs per SM (half of the
   H100's 227 KB opt-in limit, 232448 bytes, minus the 1 KB per CTA the hardware reserves) */
#define W4A16_SM90_HALF_SM_SMEM 115712
/* stream-K where the output tiles fill less than this fraction of their waves, over at most this
   many waves, from this M on (H100: at M <= 64 the kernels stream weights at the memory's pace
   and the fixup only costs, 28672x4096 at M = 1..32 loses 14-22 %; from M = 128 it gains up to
   20 %) */
#define W4A16_SM90_STREAMK_EFF 0.85
#define W4A16_SM90_STREAMK_WAVES 4
#define W4A16_SM90_STREAMK_MIN_M 65
/* the 256-k tiles (128 rows) from M = 17, and in place of split-K (w4a16_choose_stream_k): at M = 32..64 stream-K takes 10240x8192 from 80 of 132
   SMs to all (8 % faster at M = 32 and 64) and 57344x8192 M = 32 10 % faster, slower nowhere
   (H100); the 128-k tiles lose there (28672x4096 M = 16 with 256x16x128 and M = 64 with
   256x64x128: 16-17 % slower) */
#define W4A16_SM90_STREAMK_MIN_M_K256 17
/* below that M, the 256-k tiles take stream-K (the K pair where it qualifies) where the tiles number
   at least this fraction of the SMs (each tile shared by about two CTAs at most): at M = 1..16
   8192x8192 (64 tiles, K pair) takes 0.89x the time with 128x16x256, 10240x8192 (80) 0.76x,
   57344x8192 0.86-0.93x; with 32-48 tiles (4096 / 6144 rows) the fixups cost up to 26 % (H100) */
#define W4A16_SM90_STREAMK_SMALL_M_FILL 0.45

static int is_finegrained(w4a16_quant_mode m) {
  return m == W4A16_FINEGRAINED_SCALE_ONLY || m == W4A16_FINEGRAINED_SCALE_AND_ZEROS;
}

int64_t w4a16_effective_group(const w4a16_problem *p) {
  if (p->group_size == 0) return p->k; /* one group per column, every mode */
  return p->group_size;
}

int64_t w4a16_group_count(const w4a16_problem *p) {
  int64_t g = w4a16_effective_group(p);
  return g > 0 ? p->k / g : 0;
}

w4a16_status w4a16_check_problem(const w4a16_problem *p) { return w4a16_check_problem_m(p, 1); }

w4a16_status w4a16_check_problem_m(const w4a16_problem *p, int64_t min_m) {
  if (!p) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem is NULL");
  if (p->dtype != W4A16_DTYPE_F16 && p->dtype != W4A16_DTYPE_BF16)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "dtype %d is not a w4a16_dtype", (int)p->dtype);
  if (p->mode != W4A16_PER_COLUMN_SCALE_ONLY && !is_finegrained(p->mode))
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "quant mode %d is not a w4a16_quant_mode", (int)p->mode);
  if (p->m < min_m || p->m > INT32_MAX)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "M = %" PRId64 " is out of range [%" PRId64 ", 2^31)", p->m, min_m);
  if (p->n < 1 || p->n > INT32_MAX)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "N = %" PRId64 " is out of range [1, 2^31)", p->n);
  if (p->k < 1 || p->k > W4A16_MAX_K)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "K = %" PRId64 " is out of range [1, 2^24]", p->k);
  if (p->n % 16 != 0)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "N = %" PRId64 " is not a multiple of 16 (packed layout)", p->n);
  if (p->k % 64 != 0)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "K = %" PRId64 " is not a multiple of 64 (packed layout)", p->k);
  int64_t lda = p->lda ? p->lda : p->k, ldd = p->ldd ? p->ldd : p->n;
  if (lda > INT32_MAX || ldd > INT32_MAX)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "%s = %" PRId64 " is out of range (< 2^31)",
                      lda > INT32_MAX ? "lda" : "ldd", lda > INT32_MAX ? lda : ldd);
  if (lda < p->k || p->lda < 0)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "lda = %" PRId64 " is smaller than K = %" PRId64, p->lda, p->k);
  if (ldd < p->n || p->ldd < 0)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "ldd = %" PRId64 " is smaller than N = %" PRId64, p->ldd, p->n);
  if (lda % 8 != 0)
    return w4a16_fail(W4A16_STATUS_MISALIGNED, "lda = %" PRId64 " is not a multiple of 8 elements (16 bytes)", lda);
  if (ldd % 8 != 0)
    return w4a16_fail(W4A16_STATUS_MISALIGNED, "ldd = %" PRId64 " is not a multiple of 8 elements (16 bytes)", ldd);
  int64_t g = w4a16_effective_group(p);
  if (p->mode == W4A16_PER_COLUMN_SCALE_ONLY) {
    if (g != p->k)
      return w4a16_fail(W4A16_STATUS_UNSUPPORTED_GROUP_SIZE,
                        "group size %d with PER_COLUMN_SCALE_ONLY: must be 0 or K = %" PRId64, p->group_size, p->k);
  } else if (g != p->k) { /* g == K (or 0): one group per column, G = 1 (per-column zero points) */
    if (g != 32 && g != 64 && g != 128 && g != 256)
      return w4a16_fail(W4A16_STATUS_UNSUPPORTED_GROUP_SIZE,
                        "group size %d is not supported (32, 64, 128, 256, or 0 / K = %" PRId64 " for one group a column)",
                        p->group_size, p->k);
    if (p->k % g != 0)
      return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "K = %" PRId64 " is not a multiple of the group size %" PRId64,
                        p->k, g);
  }
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_can_implement(const w4a16_kernel_desc *kd, const w4a16_problem *p) {
  if (!kd) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "kernel is NULL");
  /* M = 0 (an empty product, a no-op for w4a16_gemm): the kernel's other rules still apply */
  w4a16_status st = w4a16_check_problem_m(p, 0);
  if (st != W4A16_STATUS_OK) return st;
  if (kd->dtype != p->dtype)
    return w4a16_fail(W4A16_STATUS_DTYPE_MISMATCH, "kernel %s is for %s activations, the problem is %s", kd->name,
                      w4a16_dtype_name(kd->dtype), w4a16_dtype_name(p->dtype));
  if (kd->mode != p->mode)
    return w4a16_fail(W4A16_STATUS_MODE_MISMATCH, "kernel %s is for %s, the problem is %s", kd->name,
                      w4a16_quant_mode_name(kd->mode), w4a16_quant_mode_name(p->mode));
  if (kd->tile_n <= 0 || kd->tile_m <= 0 || kd->tile_k <= 0)
    return w4a16_fail(W4A16_STATUS_INTERNAL_ERROR, "kernel %s has an empty tile", kd->name);
  /* the CTAs of a cluster along N each own a tile_n block: N must cover whole clusters, unless the
     kernel predicates a part-full last tile (n_multiple, k_multiple: the sm80 family) */
  const int n_block = kd->n_multiple > 0 ? kd->n_multiple : kd->tile_n * (kd->cluster_n > 1 ? kd->cluster_n : 1);
  if (p->n % n_block != 0)
    return w4a16_fail(W4A16_STATUS_NOT_SUPPORTED, "kernel %s needs N %% %d == 0%s, N = %" PRId64, kd->name, n_block,
                      kd->n_multiple > 0 ? "" : " (its tile: no part-full tile along N)", p->n);
  const int k_block = kd->k_multiple > 0 ? kd->k_multiple : kd->tile_k;
  if (p->k % k_block != 0)
    return w4a16_fail(W4A16_STATUS_NOT_SUPPORTED, "kernel %s needs K %% %d == 0%s, K = %" PRId64, kd->name, k_block,
                      kd->k_multiple > 0 ? "" : " (its tile: no part-full tile along K)", p->k);
  int64_t g = w4a16_effective_group(p);
  if (p->mode != W4A16_PER_COLUMN_SCALE_ONLY && g < kd->min_group)
    return w4a16_fail(W4A16_STATUS_UNSUPPORTED_GROUP_SIZE, "kernel %s needs group size >= %d, got %" PRId64,
                      kd->name, kd->min_group, g);
  if (kd->family == W4A16_FAMILY_GEMV && p->m > kd->tile_m)
    return w4a16_fail(W4A16_STATUS_NOT_SUPPORTED, "GEMV kernel %s handles M <= %d, M = %" PRId64, kd->name,
                      kd->tile_m, p->m);
  return W4A16_STATUS_OK;
}

/* CTA slots of one wave of an sm90 kernel: the register-light tiles run two CTAs per SM, and exactly
   those ask for at most half an SM of shared memory (runtime/cuda/sm90/gemm_sm90.cuh, Cfg::kCtasPerSm) */
static int64_t sm90_slots(const w4a16_kernel_desc *kd, int sm_count) {
  return (int64_t)sm_count * (kd->smem_bytes <= W4A16_SM90_HALF_SM_SMEM ? 2 : 1);
}

/* the split-K rule alone (w4a16_choose_split_k also leaves the stream-K problems unsplit) */
static int split_k_rule(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm_count) {
  if (kd->split_k <= 1 || sm_count <= 0 || p->m < 1) return 1;
  /* part-full last tiles count (N and K tails: kernels with n_multiple / k_multiple) */
  int64_t tiles = ((p->m + kd->tile_m - 1) / kd->tile_m) * ((p->n + kd->tile_n - 1) / kd->tile_n);
  int64_t k_iters = (p->k + kd->tile_k - 1) / kd->tile_k;
  if (kd->family == W4A16_FAMILY_SM90) {
    /* sm90 slices K unevenly ([z*k_iters/split, (z+1)*k_iters/split) k-blocks), so any
     * split <= k_iters works: the largest split whose units still fit in one wave of the
     * persistent grid (tiles * split <= its CTA slots), capped by the kernel's split_k. The
     * register-light tiles run two CTAs per SM, and exactly those ask for at most half an SM of
     * shared memory (runtime/cuda/sm90/gemm_sm90.cuh, Cfg::kCtasPerSm). */
    const int64_t slots = sm90_slots(kd, sm_count);
    if (tiles >= slots) return 1;
    int64_t s = slots / tiles;
    if (s > kd->split_k) s = kd->split_k;
    if (s > k_iters) s = k_iters;
    return s > 1 ? (int)s : 1;
  }
  if (tiles >= sm_count) return 1;
  /* GEMV: splitting half a wave or more of tiles over a short K costs more than the extra
     parallelism gains (H100: 128 tiles split 2 at K = 4096 was 8% slower, at K = 14336 20% faster) */
  if (kd->family == W4A16_FAMILY_GEMV && tiles * 2 >= sm_count && p->k < 8192) return 1;
  int best = 1;
  for (int s = 2; s <= kd->split_k && s <= k_iters; ++s) {
    if (k_iters % s != 0) continue;
    best = s;
    if (tiles * s >= sm_count) break;
  }
  return best;
}

/* stream-K's smallest M for kd; W4A16_SM90_STREAMK_MIN_M=<m>: that M for every tile, and no
   small-M fill rule (measurement switch: *forced set) */
static int streamk_min_m(const w4a16_kernel_desc *kd, int *forced) {
  const char *env = getenv("W4A16_SM90_STREAMK_MIN_M");
  *forced = env != NULL;
  if (env) return atoi(env);
  return kd->tile_k >= 256 ? 1 : W4A16_SM90_STREAMK_MIN_M;
}

_Thread_local int w4a16_sm90_last_streamk, w4a16_sm90_last_kpair, w4a16_sm90_last_split, w4a16_sm90_last_skew;

int w4a16_stream_k_min_m(const w4a16_kernel_desc *kd) {
  int forced;
  return streamk_min_m(kd, &forced);
}

int w4a16_choose_stream_k(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm_count) {
  if (kd->family != W4A16_FAMILY_SM90 || sm_count <= 0 || p->m < 1) return 0;
  /* W4A16_SM90_STREAMK: 0 = never, 1 = wherever the tiles leave a wave part-empty (A/B switches) */
  const char *env = getenv("W4A16_SM90_STREAMK");
  const int force = env ? atoi(env) : -1;
  if (force == 0) return 0;
  int min_m_forced;
  if (p->m < streamk_min_m(kd, &min_m_forced)) return 0;
  /* =2: in place of split-K too (measurement); the 256-k tiles take it in place of split-K anyway:
     it is 3-4 % faster there (H100: 8192x8192 M = 32 / 64, 8192x28672 M = 32); the 128-k tiles
     gain nothing consistent */
  if (force != 2 && kd->tile_k < 256 && split_k_rule(kd, p, sm_count) > 1) return 0;
  const int64_t cn = kd->cluster_n > 1 ? kd->cluster_n : 1, cm = kd->cluster_m > 1 ? kd->cluster_m : 1;
  const int64_t slots = sm90_slots(kd, sm_count) / (cn * cm);
  const int64_t tiles = ((p->m + kd->tile_m * cm - 1) / (kd->tile_m * cm)) *
                        ((p->n + kd->tile_n * cn - 1) / (kd->tile_n * cn));
  const int64_t k_iters = (p->k + kd->tile_k - 1) / kd->tile_k;
  if (slots < 1 || tiles % slots == 0 || k_iters < 4) return 0;
  if (kd->tile_k >= 256 && p->m < W4A16_SM90_STREAMK_MIN_M_K256 && !min_m_forced &&
      (double)tiles < W4A16_SM90_STREAMK_SMALL_M_FILL * (double)slots)
    return 0;
  const int64_t waves = (tiles + slots - 1) / slots;
  const double eff = (double)tiles / (double)(waves * slots);
  if (force >= 1) return 1;
  return eff < W4A16_SM90_STREAMK_EFF && waves <= W4A16_SM90_STREAMK_WAVES;
}

int w4a16_choose_split_k(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm_count) {
  return w4a16_choose_stream_k(kd, p, sm_count) ? 1 : split_k_rule(kd, p, sm_count);
}

size_t w4a16_workspace_bytes_for(const w4a16_kernel_desc *kd, const w4a16_problem *p, int split, int stream_k,
                                 int sm_count) {
  if (stream_k) {
    /* one partial tile per CTA of the persistent grid (fp32), then a 32-bit flag per CTA */
    const size_t ctas = (size_t)sm90_slots(kd, sm_count);
    return ctas * (size_t)kd->tile_n * (size_t)kd->tile_m * sizeof(float) + (ctas * sizeof(uint32_t) + 15) / 16 * 16;
  }
  if (split <= 1) return 0;
  return (size_t)split * (size_t)p->m * (size_t)p->n * sizeof(float);
}

w4a16_status w4a16_workspace_size(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm_count,
                                  size_t *bytes) {
  if (!bytes) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "bytes is NULL");
  *bytes = 0;
  w4a16_status st = kd ? w4a16_can_implement(kd, p) : w4a16_check_problem_m(p, 0);
  if (st != W4A16_STATUS_OK) return st;
  if (sm_count < 0) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "sm_count = %d is negative", sm_count);
  if (p->m == 0) { /* nothing runs: no workspace, no device asked */
    w4a16_clear_error();
    return W4A16_STATUS_OK;
  }
  if (sm_count == 0 || !kd) {
    w4a16_device_info info;
    st = w4a16_current_device(&info);
    if (st != W4A16_STATUS_OK) return st;
    if (sm_count == 0) sm_count = info.sm_count;
    if (!kd) { /* the kernel w4a16_gemm(..., NULL, ...) selects on this device now */
      info.sm_count = sm_count;
      kd = w4a16_select_kernel(p, &info);
      if (!kd) {
        w4a16_clear_error();
        return W4A16_STATUS_OK; /* none: w4a16_gemm refuses with NO_KERNEL, whatever the workspace */
      }
    }
  }
  *bytes = w4a16_workspace_bytes_for(kd, p, w4a16_choose_split_k(kd, p, sm_count),
                                     w4a16_choose_stream_k(kd, p, sm_count), sm_count);
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

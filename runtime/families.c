/* families.c - problem checks, can_implement and the workspace query (host-side rules; the launch
   plan, split-K and stream-K included, is runtime/plan.c's). */
#include <inttypes.h>

#include "internal.h"
#include "select_internal.h"

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
  if (kd->grouped)
    return w4a16_fail(W4A16_STATUS_NOT_SUPPORTED, "kernel %s is a grouped kernel: w4a16_grouped_gemm runs it", kd->name);
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
  w4a16_plan plan;
  w4a16_plan_launch(kd, p, sm_count, 0, W4A16_PLAN_RULES, &plan); /* the runtime's own reservation */
  *bytes = plan.workspace_bytes;
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

/* gemm.c - w4a16_gemm: validate everything, guard the architecture, launch. */
#include <inttypes.h>
#include <stdio.h>

#include "debug.h"
#include "internal.h"
#include "select_internal.h"
#include "w4a16_build_config.h"

static int misaligned(const void *p) { return ((uintptr_t)p & 15u) != 0; }

static w4a16_status check_pointers(const w4a16_gemm_args *a) {
  const w4a16_problem *p = &a->problem;
  if (!a->a) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "A (args->a) is NULL");
  if (!a->w) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "packed weights (args->w) are NULL");
  if (!a->scales) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "scales (args->scales) are NULL");
  if (!a->d) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "D (args->d) is NULL");
  if (p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS && !a->zeros)
    return w4a16_fail(W4A16_STATUS_NULL_POINTER, "zeros (args->zeros) are NULL with FINEGRAINED_SCALE_AND_ZEROS");
  if (p->has_bias && !a->bias)
    return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem.has_bias is set but args->bias is NULL");
  if (!p->has_bias && a->bias)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "args->bias is given but problem.has_bias is 0");
  if (p->act_order && !a->a_perm)
    return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem.act_order is set but args->a_perm is NULL");
  if (!p->act_order && a->a_perm)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "args->a_perm is given but problem.act_order is 0");
  struct { const void *ptr; const char *name; } ptrs[] = {
      {a->a, "A"}, {a->w, "packed weights"}, {a->scales, "scales"}, {a->d, "D"},
      {p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? a->zeros : NULL, "zeros"},
      {a->bias, "bias"}, {a->a_perm, "a_perm"}};
  for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; ++i)
    if (ptrs[i].ptr && misaligned(ptrs[i].ptr))
      return w4a16_fail(W4A16_STATUS_MISALIGNED, "%s pointer %p is not 16-byte aligned", ptrs[i].name, ptrs[i].ptr);
  if (a->alpha != a->alpha) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "alpha is NaN");
  return w4a16_check_gemm_flags(a->flags);
}

w4a16_status w4a16_check_gemm_flags(unsigned flags) {
  if (flags & ~W4A16_GEMM_NO_PDL)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "args->flags = 0x%x has bits other than W4A16_GEMM_NO_PDL (0x%x)",
                      flags, W4A16_GEMM_NO_PDL);
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_gemm(const w4a16_gemm_args *args, const w4a16_kernel_desc *kernel, void *workspace,
                        size_t workspace_bytes, void *stream) {
  if (!args) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "args is NULL");
  const w4a16_problem *p = &args->problem;
  w4a16_status st = w4a16_check_problem_m(p, 0);
  if (st != W4A16_STATUS_OK) return st;
  if (kernel && (st = w4a16_can_implement(kernel, p)) != W4A16_STATUS_OK) return st;
  if (p->m == 0) { /* an empty product: nothing to compute, nothing launched, D (empty) untouched */
    w4a16_clear_error();
    return W4A16_STATUS_OK;
  }
  if ((st = check_pointers(args)) != W4A16_STATUS_OK) return st;

  w4a16_device_info dev;
  if ((st = w4a16_current_device(&dev)) != W4A16_STATUS_OK) return st;
  const int selected = !kernel;
  if (!kernel) {
    kernel = w4a16_select_kernel(p, &dev);
    if (!kernel)
      return w4a16_fail(W4A16_STATUS_NO_KERNEL,
                        "no kernel of this library (built for %s) can run M=%" PRId64 " N=%" PRId64 " K=%" PRId64
                        " group=%d %s %s on the device sm_%d",
                        W4A16_BUILT_ARCHS, p->m, p->n, p->k, p->group_size, w4a16_quant_mode_name(p->mode),
                        w4a16_dtype_name(p->dtype), dev.cc);
  }
  if ((st = w4a16_kernel_runs_here(kernel, &dev)) != W4A16_STATUS_OK) return st;

  /* the launch plan, once: the kernel's launch follows it (a kernel of our choosing runs without
     split-K or stream-K where the workspace given is too small for them) */
  w4a16_plan plan;
  const size_t given = workspace ? workspace_bytes : 0;
  const int pe = w4a16_plan_launch(kernel, p, dev.sm_count, given, selected ? W4A16_PLAN_FIT_WORKSPACE : 0, &plan);
  if (pe != 0) return w4a16_fail_cuda(pe, kernel->name);
  const size_t need = plan.workspace_bytes;
  if (given < need)
    return w4a16_fail(W4A16_STATUS_WORKSPACE_TOO_SMALL, "kernel %s needs %zu bytes of workspace, got %zu%s",
                      kernel->name, need, given, workspace ? "" : " (NULL)");
  if (need && misaligned(workspace))
    return w4a16_fail(W4A16_STATUS_MISALIGNED, "workspace pointer %p is not 16-byte aligned", workspace);

  struct w4a16_launch_params lp = {
      .a = args->a, .w = args->w, .scales = args->scales,
      .zeros = p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? args->zeros : NULL,
      .bias = p->has_bias ? args->bias : NULL, .d = args->d, .workspace = workspace,
      .workspace_bytes = workspace_bytes, .lda = p->lda ? p->lda : p->k, .ldd = p->ldd ? p->ldd : p->n,
      .m = (int)p->m, .n = (int)p->n, .k = (int)p->k, .group_size = (int)w4a16_effective_group(p),
      .alpha = args->alpha, .sm_count = dev.sm_count, .split_k = plan.split_k, .plan = &plan,
      .no_pdl = (args->flags & W4A16_GEMM_NO_PDL) != 0};
  int e = W4A16_LAUNCH_UNFUSED;
  /* act-order at M = 1: the TMA GEMV gathers A's row itself where the call launches in plain stream
     order (W4A16_GEMM_NO_PDL; the GEMV starts only once the kernel before it has completed, and a
     separate gather kernel would add a kernel boundary); with the programmatic launch the gather
     kernel runs while the GEMV's first stages stream (docs/PERFORMANCE.md, act-order) */
  const int in_kernel = w4a16_debug()->gemv_tma_perm;
  if (p->act_order && p->m == 1 && kernel->schedule == W4A16_SCHEDULE_GEMV_TMA &&
      (in_kernel > 0 || (in_kernel < 0 && lp.no_pdl))) {
    lp.a_perm = args->a_perm; /* the kernel gathers the row itself where it can */
    e = kernel->impl->launch(&lp, stream);
    lp.a_perm = NULL;
  }
  if (e == W4A16_LAUNCH_UNFUSED) {
    if (p->act_order) { /* A's columns gathered into the workspace first */
      void *gathered = (char *)workspace + plan.gather_offset;
      const int ge = w4a16_gather_k_launch(args->a, lp.lda, args->a_perm, p->m, (int)p->k, gathered, p->k,
                                           dev.sm_count, !lp.no_pdl, stream);
      if (ge != 0) return w4a16_fail_cuda(ge, "the act-order gather (w4a16_gather_k)");
      lp.a = gathered;
      lp.lda = p->k;
      lp.no_pdl = 0; /* the GEMM follows the gather, which lets it launch at once */
    }
    e = kernel->impl->launch(&lp, stream);
  }
  if (e != 0) return w4a16_fail_cuda(e, kernel->name);
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

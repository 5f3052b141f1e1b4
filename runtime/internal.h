/* internal.h - runtime internals shared by the C files (not installed). */
#ifndef W4A16_INTERNAL_H
#define W4A16_INTERNAL_H

#include <stdarg.h>

#include "registry.h"
#include "w4a16/w4a16.h"

#if defined(__GNUC__)
#define W4A16_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define W4A16_PRINTF(a, b)
#endif

/* 64-bit FNV-1a (Fowler/Noll/Vo; offset basis and prime from the reference description):
   h = w4a16_fnv1a(W4A16_FNV1A_OFFSET, data, n), or continued by passing the previous h. */
#define W4A16_FNV1A_OFFSET 14695981039346656037ull
static inline uint64_t w4a16_fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* Record status and a printf-style message for this thread; returns status. */
w4a16_status w4a16_fail(w4a16_status status, const char *fmt, ...) W4A16_PRINTF(2, 3);
/* Clear this thread's message (start of a public call that succeeded). */
void w4a16_clear_error(void);
/* Record a CUDA error code for this thread; returns W4A16_STATUS_CUDA_ERROR with a message. */
w4a16_status w4a16_fail_cuda(int cuda_error, const char *what);

/* Properties of the current device, cached per device ordinal. */
typedef struct w4a16_device_info {
  int ordinal;
  int cc;        /* major*10 + minor */
  int sm_count;
  int max_smem_optin;
  int mem_gbps;  /* peak DRAM bandwidth, GB/s: 2 x memory clock x bus width / 8 (0 = unknown) */
} w4a16_device_info;
/* OK, NO_DEVICE or CUDA_ERROR (with message). */
w4a16_status w4a16_current_device(w4a16_device_info *info);

/* Normalized group size: K for PER_COLUMN_SCALE_ONLY (0 means K), else as given. */
int64_t w4a16_effective_group(const w4a16_problem *p);
/* Number of scale rows G = K / group. */
int64_t w4a16_group_count(const w4a16_problem *p);
/* Bytes of one element of dtype (2). */
static inline size_t w4a16_dtype_bytes(w4a16_dtype d) { (void)d; return 2; }

/* Split-K factor the runtime launches kernel with (>= 1); see runtime/cuda/common/splitk.cuh. */
int w4a16_choose_split_k(const w4a16_kernel_desc *kernel, const w4a16_problem *problem, int sm_count);
/* The schedule this thread's last sm90 launch ran (set by runtime/cuda/sm90/gemm_sm90.cuh's launch,
   read by the tests): stream-K (0 none, else 1 + data-parallel tiles a cluster), the K pair (0 / 1),
   split-K slices, the stream-K parts' skew B (Params::sk_rem: the last B parts one iteration
   shorter, B more at the front one longer; 0 none) */
extern _Thread_local int w4a16_sm90_last_streamk, w4a16_sm90_last_kpair, w4a16_sm90_last_split, w4a16_sm90_last_skew;
/* Whether the runtime launches an sm90 kernel stream-K (1) or tile by tile (0): from M =
   w4a16_stream_k_min_m, where the output tiles leave their last wave part-empty and split-K does
   not apply (tile_k 256: split-K or not); W4A16_SM90_STREAMK =0 / 1 / 2 overrides (never / wherever
   a wave is part-empty, from that M / that, in place of split-K too). w4a16_choose_split_k gives 1
   where this gives 1. runtime/cuda/sm90/gemm_sm90.cuh. */
int w4a16_stream_k_min_m(const w4a16_kernel_desc *kernel); /* 65; 1 for tile_k 256, below 17 where the tiles are >= 0.45 x SMs (W4A16_SM90_STREAMK_MIN_M) */
int w4a16_choose_stream_k(const w4a16_kernel_desc *kernel, const w4a16_problem *problem, int sm_count);
/* Workspace bytes for kernel on problem at split-K split / stream-K stream_k: split > 1: the fp32
   partials, [split][M][N]; stream_k: one fp32 partial tile (tile_n x tile_m) per CTA slot of a
   wave (sm_count x CTAs per SM), then a 32-bit flag per slot; else 0. */
size_t w4a16_workspace_bytes_for(const w4a16_kernel_desc *kernel, const w4a16_problem *problem, int split,
                                 int stream_k, int sm_count);

/* Problem-level checks shared by every kernel (shape, strides, group size): OK or a status. */
w4a16_status w4a16_check_problem(const w4a16_problem *problem);
/* The same with M >= min_m: 0 where an empty product is a valid no-op (can_implement, the
   workspace query, w4a16_gemm, the reference, the heuristic query), 1 elsewhere. */
w4a16_status w4a16_check_problem_m(const w4a16_problem *problem, int64_t min_m);

/*
 * Architecture guard: OK if kernel may launch on the device described by info
 * (compute capability inside [sm_min, sm_max] and the binary holds an image for
 * the device), else ARCH_MISMATCH with a message naming both architectures.
 */
w4a16_status w4a16_kernel_runs_here(const w4a16_kernel_desc *kernel, const w4a16_device_info *info);

#endif

/*
 * kernel_abi.h - the interface between the C runtime and compiled kernels.
 *
 * Each generated instantiation (one .cu file) defines one function
 *
 *     extern "C" int <kernel name>_launch(const struct w4a16_launch_params *p,
 *                                         cudaStream_t stream);
 *
 * and the generated registry table points at it through w4a16_kernel_impl.
 * The runtime has already validated every argument (can_implement, alignment,
 * workspace, architecture) before calling launch; launch only configures and
 * launches (raising the dynamic shared-memory limit when needed) and returns
 * the cudaError_t of the launch as int (0 = cudaSuccess).
 *
 * Plain C: included by the C runtime and by CUDA device code.
 */
#ifndef W4A16_KERNEL_ABI_H
#define W4A16_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

#ifdef __cplusplus
extern "C" {
#endif

struct w4a16_launch_params {
  const void *a;      /* [M, lda] activations (dtype of the kernel) */
  const void *w;      /* packed weights, docs/LAYOUT.md */
  const void *scales; /* [G, N] */
  const void *zeros;  /* [G, N] or NULL */
  const void *bias;   /* [N] or NULL */
  void *d;            /* [M, ldd] output */
  void *workspace;    /* device workspace (split-K partials), may be NULL */
  size_t workspace_bytes;
  int64_t lda, ldd;   /* elements */
  int m, n, k;
  int group_size;     /* K for per-column */
  float alpha;
  int sm_count;       /* multiprocessors of the device */
  int split_k;        /* K splits chosen by the runtime (>= 1): plan->split_k */
  const struct w4a16_plan *plan; /* the launch plan (plan.h), which the launch follows */
  /* act-order, int32 [K]: given only to the sm_90 TMA GEMV kernels at M = 1 where the runtime
     chooses the in-kernel gather (gemm.c: calls with W4A16_GEMM_NO_PDL, or W4A16_GEMV_TMA_PERM=1,
     debug.h), which gather A's row through it in the kernel, or return
     W4A16_LAUNCH_UNFUSED, launching nothing, where they do not (then the runtime gathers A into the
     workspace and launches again without it); NULL otherwise */
  const int32_t *a_perm;
  /* W4A16_GEMM_NO_PDL (w4a16.h): this launch's kernel in plain stream order, without the programmatic
     attribute; a split-K reduction it chains keeps it */
  int no_pdl;
};

/* A launch's answer (not a cudaError_t) where it was given a_perm and does not gather itself. */
#define W4A16_LAUNCH_UNFUSED (-1)

typedef int (*w4a16_launch_fn)(const struct w4a16_launch_params *p, void *stream);

/* A grouped (mixture-of-experts) launch: w4a16_grouped_gemm_args after the runtime's checks. */
struct w4a16_grouped_launch_params {
  const void *a;          /* [a_rows or rows, lda] */
  const void *w;          /* [E][N*K/2] packed */
  const void *scales;     /* [E][G][N] */
  const void *zeros;      /* [E][G][N] or NULL */
  const void *offsets;    /* [E + 1], int32 (offsets64 0) or int64 (1) */
  const int32_t *row_index; /* [rows] or NULL */
  const float *row_scale; /* [rows] or NULL */
  void *d;                /* [rows, ldd] */
  int *status;            /* or NULL */
  int64_t lda, ldd;
  int experts, rows, a_rows; /* a_rows: rows of A (rows when row_index is NULL) */
  int n, k;
  int group_size;         /* K for per-column */
  int offsets64;
  float alpha;
  int sm_count;
  int no_pdl;             /* W4A16_GEMM_NO_PDL: the launch without the programmatic attribute */
  /* 1: the runtime gathered A into grouped order (runtime/cuda/gather_rows.cu; a is [rows, lda]):
     the kernel reads A without the row index, which only its status word checks */
  int a_gathered;
};

typedef int (*w4a16_grouped_launch_fn)(const struct w4a16_grouped_launch_params *p, void *stream);

struct w4a16_kernel_impl {
  w4a16_launch_fn launch; /* NULL for a grouped kernel */
  /* Returns the cudaError_t of cudaFuncGetAttributes on the kernel's global
     function: nonzero when the binary holds no image for the present device. */
  int (*probe)(void);
  w4a16_grouped_launch_fn grouped_launch; /* a grouped kernel's; NULL for the others */
  /* sm90 kernels: the kernel's facts for the launch plan on a device of sm_count SMs (plan.h;
     0 or the cudaError_t of its occupancy queries); NULL for the others */
  int (*sm90_facts)(int sm_count, struct w4a16_sm90_facts *facts);
};

#ifdef __cplusplus
}
#endif

#endif

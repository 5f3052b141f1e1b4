/* internal.h - runtime internals shared by the C files (not installed). */
#ifndef W4A16_INTERNAL_H
#define W4A16_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "plan.h"
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
#define W4A16_FNV1A_PRIME 1099511628211ull
static inline uint64_t w4a16_fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= W4A16_FNV1A_PRIME;
  }
  return h;
}

/* A memo of selections (memo.c): a key of W4A16_MEMO_WORDS 64-bit words (the problem's fields and
   the device's, unused words 0) and a generation (a source that can change what the selection
   picks, such as the config cache, bumps it; 0 where none) -> the kernel picked and where it came
   from. Open addressing over W4A16_MEMO_SIZE slots, W4A16_MEMO_PROBE probes from the key's hash; a
   new key whose probes find no free, stale or equal slot replaces the first. Only successful
   selections go in. Thread-safe (one mutex a memo). Define one with W4A16_MEMO_INIT. */
#define W4A16_MEMO_WORDS 16
#define W4A16_MEMO_SIZE 1024
#define W4A16_MEMO_PROBE 8
typedef struct w4a16_memo_entry {
  uint64_t key[W4A16_MEMO_WORDS];
  unsigned generation;
  int used, source;
  const w4a16_kernel_desc *kd;
} w4a16_memo_entry;
typedef struct w4a16_memo {
  pthread_mutex_t mu;
  w4a16_memo_entry slot[W4A16_MEMO_SIZE];
} w4a16_memo;
#define W4A16_MEMO_INIT {PTHREAD_MUTEX_INITIALIZER, {{{0}, 0, 0, 0, NULL}}}
/* key (uint64_t[W4A16_MEMO_WORDS]) = the listed fields, each converted to uint64_t, then zeros;
   more fields than W4A16_MEMO_WORDS do not compile */
#define W4A16_MEMO_KEY(key, ...)                                                                   \
  do {                                                                                            \
    const uint64_t memo_fields_[] = {__VA_ARGS__};                                                \
    _Static_assert(sizeof memo_fields_ / sizeof memo_fields_[0] <= W4A16_MEMO_WORDS, "memo key"); \
    memset((key), 0, W4A16_MEMO_WORDS * sizeof(uint64_t));                                        \
    memcpy((key), memo_fields_, sizeof memo_fields_);                                             \
  } while (0)
/* The kernel stored for (key, generation), its source in *source (where not NULL); NULL if none */
const w4a16_kernel_desc *w4a16_memo_get(w4a16_memo *m, const uint64_t key[W4A16_MEMO_WORDS], unsigned generation,
                                        int *source);
/* Store kd and source for (key, generation) */
void w4a16_memo_put(w4a16_memo *m, const uint64_t key[W4A16_MEMO_WORDS], unsigned generation,
                    const w4a16_kernel_desc *kd, int source);

/* Record status and a printf-style message for this thread; returns status. */
w4a16_status w4a16_fail(w4a16_status status, const char *fmt, ...) W4A16_PRINTF(2, 3);
/* Between w4a16_quiet_begin and w4a16_quiet_end (pairs nest) w4a16_fail on this thread returns its
   status without writing the message: for the loops that ask every kernel of a table whether it can
   run a problem and drop those that cannot, where formatting the refusals cost most of the query.
   The loop records its own message for the outcome it reports. */
void w4a16_quiet_begin(void);
void w4a16_quiet_end(void);
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

/* The launch plan (plan.h) of kernel on problem on a device of sm_count SMs with workspace_bytes of
   workspace given (0 for none), computed once; returns 0 or the cudaError_t of the kernel's facts query.
   flags: W4A16_PLAN_RULES - the rules' split-K and stream-K and the workspace they reserve only, without
   the kernel's facts (no device needed: selection's estimate, the workspace query);
   W4A16_PLAN_FIT_WORKSPACE - without split-K and stream-K where the workspace given is below what they
   reserve (a kernel the runtime selected). Without FIT, plan->workspace_bytes above workspace_bytes is
   the caller's error to report. */
#define W4A16_PLAN_RULES 1
#define W4A16_PLAN_FIT_WORKSPACE 2
int w4a16_plan_launch(const w4a16_kernel_desc *kernel, const w4a16_problem *problem, int sm_count,
                      size_t workspace_bytes, int flags, w4a16_plan *plan);
/* Stream-K's smallest M for an sm90 kernel: 65; 1 for tile_k 256, whose tiles below M = 17 take it only
   where they number at least 0.45 x the SMs (W4A16_SM90_STREAMK_MIN_M overrides, debug.h). */
int w4a16_stream_k_min_m(const w4a16_kernel_desc *kernel);

/* args->flags of w4a16_gemm_args and w4a16_grouped_gemm_args: OK, or INVALID_VALUE naming bits other than
   W4A16_GEMM_NO_PDL. */
w4a16_status w4a16_check_gemm_flags(unsigned flags);

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

/* The grouped GEMM's checks (runtime/grouped.c), as w4a16_grouped_gemm makes them: of the arguments
   (struct_size, experts, rows, offsets_type, one expert's shape, strides and group size; no kernel),
   and of the pointers (NULL, alignment) and alpha. OK or a status whose message names the value. */
w4a16_status w4a16_grouped_check_args(const w4a16_grouped_gemm_args *args);
w4a16_status w4a16_grouped_check_pointers(const w4a16_grouped_gemm_args *args);
/* w4a16_grouped_gemm's selection for args (checked) on the device dev describes (cc 0: every
   architecture's kernels rank, no image probed): its memo, else w4a16_grouped_heuristic_query's rule
   with the workspace's room for the gathered rows (gather_room), whose first pick goes in the memo.
   OK with *kernel set; else the query's status (NO_KERNEL), nothing stored. */
w4a16_status w4a16_grouped_select(const w4a16_grouped_gemm_args *args, const w4a16_device_info *dev, int gather_room,
                                  const w4a16_kernel_desc **kernel);

/* runtime/cuda/gather_k.cu: out[m, k] = a[m, perm[k]] (w4a16_gather_k, and w4a16_gemm's act-order
   where the kernel does not gather itself); returns the launch's cudaError_t as int; with pdl set the
   launch carries programmatic stream serialization where the device's image of the kernel holds
   griddepcontrol.wait. */
int w4a16_gather_k_launch(const void *a, int64_t lda, const int32_t *perm, int64_t m, int k, void *out,
                          int64_t ldo, int sm_count, int pdl, void *stream);

/* runtime/cuda/gather_rows.cu: out[r, :] = a[row_index[r], :] for r < rows, out [rows, K] dense (the
   grouped GEMM's row gather before a kernel that does not gather itself); an index outside [0,
   a_rows) writes a zero row; returns the launch's cudaError_t as int; pdl as w4a16_gather_k_launch. */
int w4a16_gather_rows_launch(const void *a, int64_t lda, const int32_t *row_index, int64_t rows, int a_rows, int k,
                             void *out, int sm_count, int pdl, void *stream);

#endif

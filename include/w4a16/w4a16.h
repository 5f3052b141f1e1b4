/*
 * w4a16.h - the public C API of w4a16: W4A16 GEMM kernels (4-bit integer weights,
 * fp16/bf16 activations, group-wise scales and zeros) for NVIDIA GPUs.
 *
 * The operation (see docs/DESIGN.md, "The operation"):
 *
 *     D[M,N] = alpha * A[M,K] . dequant(W)[N,K]^T  (+ bias[N])
 *
 *   A       [M,K] row-major, row stride lda >= K elements, fp16 or bf16
 *   W       logical [N,K] codes q in [0,15] (like torch.nn.Linear.weight), stored
 *           in the library's packed layout (N*K/2 bytes, docs/LAYOUT.md), produced
 *           by w4a16_pack_weights()
 *   scales  [G,N] row-major, G = K / group_size (G = 1 for per-column: group_size 0 or K,
 *           which every mode takes), dtype of A
 *   zeros   [G,N] row-major (FINEGRAINED_SCALE_AND_ZEROS only), dtype of A
 *   bias    [N] or NULL, dtype of A
 *   D       [M,N] row-major, row stride ldd >= N elements, dtype of A
 *
 * Accumulation is fp32. Dequantization per mode:
 *   PER_COLUMN_SCALE_ONLY         w = s[n] * (q - 8)
 *   FINEGRAINED_SCALE_ONLY        w = s[k/g, n] * (q - 8)
 *   FINEGRAINED_SCALE_AND_ZEROS   w = s[k/g, n] * q + z[k/g, n]
 *     (GPTQ/AWQ integer zero point zq maps to z = -s * zq)
 *
 * Thread-safety: every function is safe to call from several threads at once,
 * except where its comment says otherwise. Error messages are kept per thread. The
 * library reads its environment variables (W4A16_CACHE_PATH where it opens the default
 * config cache, W4A16_LOG_LEVEL once) with getenv: changing the environment (setenv)
 * while another thread calls into the library is a data race.
 *
 * Compatibility (ABI): status values, enum values and function signatures are never
 * reused for another meaning. Structs that the library hands out by pointer
 * (w4a16_kernel_desc, the registry's entries) grow only at their end: read them through
 * the pointers, never copy arrays of them. Option structs that the caller fills carry a
 * struct_size (w4a16_quantize_options) or are zero-initialized with every zero meaning the
 * default (w4a16_profile_options), so that a later version can add fields at the end. The
 * caller-allocated problem and argument structs (w4a16_problem, w4a16_gemm_args,
 * w4a16_heuristic_rule) keep their layout within a minor version; until 1.0 a minor version
 * may change them, and the version macros below say which one a program was built against.
 * select.h's "advanced" calls (rule tables, the profiler) are for tools and tuning and may
 * change with a minor version.
 */
#ifndef W4A16_H
#define W4A16_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define W4A16_API
#elif defined(__GNUC__)
#define W4A16_API __attribute__((visibility("default")))
#else
#define W4A16_API
#endif

/* ------------------------------------------------------------------------- */
/* Version                                                                   */
/* ------------------------------------------------------------------------- */

#define W4A16_VERSION_MAJOR 0
#define W4A16_VERSION_MINOR 1
#define W4A16_VERSION_PATCH 0
/** MAJOR*10000 + MINOR*100 + PATCH, e.g. 100 for 0.1.0. */
#define W4A16_VERSION_NUMBER \
  (W4A16_VERSION_MAJOR * 10000 + W4A16_VERSION_MINOR * 100 + W4A16_VERSION_PATCH)
#define W4A16_VERSION_STRING "0.1.0"

/** The library's version number, W4A16_VERSION_NUMBER of the built library. */
W4A16_API unsigned w4a16_version(void);
/** The library's version as "MAJOR.MINOR.PATCH"; a static string. */
W4A16_API const char *w4a16_version_string(void);

/* ------------------------------------------------------------------------- */
/* Status                                                                    */
/* ------------------------------------------------------------------------- */

/*
 * X(NAME, value, description). Values are explicit and stable: a value is never
 * reused for another meaning.
 */
#define W4A16_STATUS_TABLE(X)                                                       \
  X(OK, 0, "success")                                                               \
  X(INVALID_VALUE, 1, "an argument has an invalid value")                           \
  X(NULL_POINTER, 2, "a required pointer is NULL")                                  \
  X(INVALID_SHAPE, 3, "M, N, K, lda or ldd is out of range")                        \
  X(MISALIGNED, 4, "a pointer or stride is not aligned as the kernel needs")        \
  X(UNSUPPORTED_GROUP_SIZE, 5, "the group size is not supported")                   \
  X(WORKSPACE_TOO_SMALL, 6, "the workspace is smaller than w4a16_workspace_size()") \
  X(DTYPE_MISMATCH, 7, "the kernel was built for another activation dtype")         \
  X(MODE_MISMATCH, 8, "the kernel was built for another quantization mode")         \
  X(UNKNOWN_KERNEL, 9, "no registered kernel has that name")                        \
  X(NOT_SUPPORTED, 10, "the kernel cannot implement this problem")                  \
  X(ARCH_MISMATCH, 11, "the kernel was not built for the present GPU architecture") \
  X(NO_KERNEL, 12, "no registered kernel can implement this problem on this GPU")   \
  X(NO_DEVICE, 13, "no CUDA device is present")                                     \
  X(CUDA_ERROR, 14, "a CUDA runtime call failed (see w4a16_last_cuda_error)")       \
  X(OUT_OF_MEMORY, 15, "host or device memory could not be allocated")              \
  X(IO_ERROR, 16, "a file could not be read or written")                            \
  X(INTERNAL_ERROR, 17, "an internal invariant was violated")

typedef enum w4a16_status {
#define W4A16_X_(name, value, desc) W4A16_STATUS_##name = value,
  W4A16_STATUS_TABLE(W4A16_X_)
#undef W4A16_X_
} w4a16_status;

/** "W4A16_STATUS_OK" etc.; "W4A16_STATUS_UNKNOWN" for a value not in the table. */
W4A16_API const char *w4a16_status_name(w4a16_status status);
/** A one-line English description of the status; never NULL. */
W4A16_API const char *w4a16_status_string(w4a16_status status);
/**
 * The message of the last failing call made by this thread (names the bad value),
 * or "" if none failed yet. Valid until this thread's next w4a16 call.
 */
W4A16_API const char *w4a16_last_error_message(void);
/**
 * The last CUDA error (a cudaError_t value as int) seen by this thread's calls,
 * 0 if none. A CUDA failure is reported as W4A16_STATUS_CUDA_ERROR, never raw.
 */
W4A16_API int w4a16_last_cuda_error(void);

/* ------------------------------------------------------------------------- */
/* Types                                                                     */
/* ------------------------------------------------------------------------- */

/** Activation / scale / output element type. */
typedef enum w4a16_dtype { W4A16_DTYPE_F16 = 0, W4A16_DTYPE_BF16 = 1 } w4a16_dtype;

/** Quantization modes, named as in TensorRT-LLM (see the formulas above). */
typedef enum w4a16_quant_mode {
  W4A16_PER_COLUMN_SCALE_ONLY = 0,
  W4A16_FINEGRAINED_SCALE_ONLY = 1,
  W4A16_FINEGRAINED_SCALE_AND_ZEROS = 2
} w4a16_quant_mode;

/** Kernel families. */
typedef enum w4a16_family {
  W4A16_FAMILY_SM80 = 0, /* mma.sync + ldmatrix + cp.async, multistage; sm80 and later */
  W4A16_FAMILY_SM90 = 1, /* TMA + wgmma warp-specialized; sm90a only */
  W4A16_FAMILY_GEMV = 2  /* CUDA-core GEMV for decode (M <= 16); sm80 and later */
} w4a16_family;

/** Mainloop schedules. */
typedef enum w4a16_schedule {
  W4A16_SCHEDULE_MULTISTAGE = 0,  /* sm80 family: cp.async multistage pipeline */
  W4A16_SCHEDULE_COOPERATIVE = 1, /* sm90: two consumer warpgroups split a tile */
  W4A16_SCHEDULE_PINGPONG = 2,    /* sm90: two consumer warpgroups alternate tiles */
  W4A16_SCHEDULE_GEMV = 3,        /* CUDA-core GEMV */
  W4A16_SCHEDULE_GEMV_TMA = 4     /* sm_90 GEMV: weights streamed by TMA bulk copies, prefetched across launches */
} w4a16_schedule;

/** "f16" / "bf16"; "?" for an unknown value. */
W4A16_API const char *w4a16_dtype_name(w4a16_dtype dtype);
/** "PER_COLUMN_SCALE_ONLY" etc.; "?" for an unknown value. */
W4A16_API const char *w4a16_quant_mode_name(w4a16_quant_mode mode);
/** "sm80", "sm90", "gemv"; "?" for an unknown value. */
W4A16_API const char *w4a16_family_name(w4a16_family family);
/** "multistage", "cooperative", "pingpong", "gemv"; "?" for an unknown value. */
W4A16_API const char *w4a16_schedule_name(w4a16_schedule schedule);

/** The largest K of a problem (the kernels address K-ordered data with 32-bit offsets). */
#define W4A16_MAX_K (1 << 24)

/**
 * A problem: what selection and can_implement look at.
 *  m, n, k      sizes; n, k >= 1, m >= 0 (M = 0: an empty product, which w4a16_gemm runs as
 *               a no-op; the profiler, tuner and config cache take M >= 1); m, n < 2^31,
 *               k <= W4A16_MAX_K (kernels state further N, K constraints)
 *  group_size   elements of K per scale row: 32, 64, 128, 256 for the FINEGRAINED
 *               modes (K must be a multiple); 0 or K in every mode: one group per
 *               column, G = 1 (normalized to K; the only choice of PER_COLUMN_SCALE_ONLY,
 *               and FINEGRAINED_SCALE_AND_ZEROS with it is per-column zero points:
 *               w = s[n] * q + z[n], e.g. GPTQ sym=False with group_size=-1)
 *  lda, ldd     row strides of A and D in elements (>= K, >= N, < 2^31); 0 means K, N
 *  has_bias     nonzero if a bias vector is given
 *  act_order    nonzero if A's columns are taken in the order of args.a_perm (an act-order
 *               weight, stored with its K columns sorted by group: see w4a16_gemm_args). It
 *               adds M*K*2 bytes (rounded up to 256) to the workspace; every kernel takes it
 */
typedef struct w4a16_problem {
  int64_t m, n, k;
  int64_t lda, ldd;
  int group_size;
  w4a16_quant_mode mode;
  w4a16_dtype dtype;
  int has_bias;
  int act_order;
} w4a16_problem;

/**
 * Arguments of one GEMM: the problem plus device pointers.
 *  a        device, [M,lda] elements of problem.dtype, 16-byte aligned, lda % 8 == 0
 *  w        device, packed weights from w4a16_pack_weights (N*K/2 bytes), 16-byte aligned
 *  scales   device, [G,N] of problem.dtype, 16-byte aligned
 *  zeros    device, [G,N] of problem.dtype (FINEGRAINED_SCALE_AND_ZEROS), else ignored;
 *           16-byte aligned
 *  bias     device, [N] of problem.dtype, or NULL (problem.has_bias must agree); 16-byte
 *           aligned
 *  d        device, [M,ldd] of problem.dtype, 16-byte aligned, ldd % 8 == 0; only
 *           D[0..M) x [0..N) is written
 *  alpha    scale applied to the product before the bias
 *  a_perm   problem.act_order set: device, int32 [K], 16-byte aligned, a permutation of
 *           0..K-1; the product takes A[m, a_perm[k]] as its column k, D = alpha *
 *           A[:, a_perm] . dequant(W)^T (+ bias). An act-order (GPTQ desc_act) weight is stored
 *           with its K columns sorted by group, perm = argsort(g_idx) (docs/DESIGN.md
 *           "Act-order"). An index outside [0, K) reads nothing and gives NaN in D. Like the
 *           packed weights it is constant across the dependency (see Ordering at w4a16_gemm).
 *           How it runs: A is gathered into the workspace first (w4a16_gather_k, one more
 *           kernel, which on sm_90 lets the GEMM launch at once and stream its weights while it
 *           runs) and the kernel runs on that; except at M = 1 in a call with W4A16_GEMM_NO_PDL,
 *           where the sm_90 TMA GEMV kernels gather A's row themselves (the GEMV cannot start
 *           early there, and the in-kernel gather costs less than a kernel boundary: H100 decode
 *           step, docs/PERFORMANCE.md). The workspace is reserved either way. NULL otherwise.
 *  flags    0, or W4A16_GEMM_NO_PDL (below)
 */
typedef struct w4a16_gemm_args {
  w4a16_problem problem;
  const void *a;
  const void *w;
  const void *scales;
  const void *zeros;
  const void *bias;
  void *d;
  float alpha;
  const int32_t *a_perm;
  unsigned flags; /* W4A16_GEMM_* bits (last, so that older initializers leave it 0) */
} w4a16_gemm_args;

/**
 * w4a16_gemm_args.flags: the call's first kernel launches in plain stream order, without
 * programmatic dependent launch (see Ordering at w4a16_gemm); kernels the call chains after it
 * (the split-K reduction, the GEMM after the act-order gather) keep it. Set it where the kernel
 * before the call on the stream is not one of this library's (PyTorch's, cuBLAS's, any kernel
 * that does not let its dependents launch early): on an H100 a programmatic launch after such a
 * kernel starts about 0.5 us later than a plain one and gains nothing, since the previous kernel
 * completes before the GEMM can start either way (docs/PERFORMANCE.md, "Programmatic dependent
 * launch"). Leave it clear where calls follow each other (layers of this library back to back).
 */
#define W4A16_GEMM_NO_PDL 1u

/* ------------------------------------------------------------------------- */
/* Kernels (the registry)                                                    */
/* ------------------------------------------------------------------------- */

struct w4a16_kernel_impl; /* private: launch entry point of a compiled kernel */

/**
 * A registered kernel instantiation. Its name is its identity (file stem, cache
 * key, bench filter), e.g. "w4a16_sm80_bf16_u4_fgs_64x32x64_s4".
 * Tiles are in the kernel's orientation: tile_n runs along N of the problem
 * (weights), tile_m along M (tokens), tile_k along K. Likewise cluster_n/_m/_k.
 */
typedef struct w4a16_kernel_desc {
  const char *name;
  w4a16_family family;
  int sm_min, sm_max; /* compute capability as major*10+minor, inclusive */
  const char *arch;   /* the build target, e.g. "sm80", "sm90a" */
  w4a16_dtype dtype;
  w4a16_quant_mode mode;
  int tile_n, tile_m, tile_k;
  int cluster_n, cluster_m, cluster_k;
  w4a16_schedule schedule;
  int stages;         /* pipeline stages (0 where not applicable) */
  int split_k;        /* GEMV: K splits per output row block (1 = none) */
  int threads;        /* threads per CTA */
  int smem_bytes;     /* dynamic shared memory per CTA */
  int min_group;      /* smallest fine-grained group size the kernel supports */
  const struct w4a16_kernel_impl *impl; /* NULL in fake tables */
  /* N and K must be multiples of these (the kernel predicates a last tile that is only partly
     inside N or K); 0: of its tile, tile_n x cluster_n and tile_k. The sm80 family and the sm90
     kernels of 1x1x1 clusters: 16 and 64. */
  int n_multiple, k_multiple;
  /* 1: a grouped (mixture-of-experts) kernel, run by w4a16_grouped_gemm and listed by
     w4a16_grouped_kernel_get; w4a16_can_implement refuses it (NOT_SUPPORTED) */
  int grouped;
} w4a16_kernel_desc;

/** Number of kernels compiled into this library. */
W4A16_API size_t w4a16_kernel_count(void);
/** Kernel i in name order, or NULL if i >= w4a16_kernel_count(). */
W4A16_API const w4a16_kernel_desc *w4a16_kernel_get(size_t i);
/** The kernel of that exact name, or NULL (then the thread's message names it). */
W4A16_API const w4a16_kernel_desc *w4a16_kernel_find(const char *name);
/**
 * A 64-bit FNV-1a hash over the names of all registered kernels, in order:
 * changes whenever the set of kernels changes (the config cache keys on it).
 */
W4A16_API uint64_t w4a16_registry_fingerprint(void);

/**
 * Whether kernel can implement problem (host-side check; no GPU needed and no
 * architecture check). Returns OK, or the status naming the first violated rule
 * (DTYPE_MISMATCH, MODE_MISMATCH, INVALID_SHAPE, MISALIGNED (lda, ldd),
 * UNSUPPORTED_GROUP_SIZE, NOT_SUPPORTED, NULL_POINTER, INVALID_VALUE; INTERNAL_ERROR for a
 * descriptor with an empty tile) with a message.
 */
W4A16_API w4a16_status w4a16_can_implement(const w4a16_kernel_desc *kernel,
                                           const w4a16_problem *problem);

/**
 * Bytes of device workspace kernel needs for problem, written to *bytes; kernel NULL: the
 * kernel w4a16_gemm(..., NULL, ...) selects on the current device now (a later tune or config
 * cache store may select another: w4a16_gemm then runs it within the workspace given)
 * (0 for most kernels; split-K needs fp32 partials, [split][M][N]; the sm90 family's
 * stream-K an fp32 partial tile and a 32-bit flag per CTA of its grid). Its contents before a call do not
 * matter (nothing needs clearing), but one workspace must not serve two launches that may
 * run at the same time. sm_count: multiprocessors of the target device (0 = ask the
 * current device). Statuses: as can_implement (kernel NULL: the problem checks alone);
 * INVALID_VALUE (sm_count < 0); NO_DEVICE, CUDA_ERROR (the device query, where sm_count is 0
 * or kernel NULL). No kernel to select is OK with 0 bytes (w4a16_gemm then gives NO_KERNEL).
 * M = 0: 0 bytes, without asking the device.
 */
W4A16_API w4a16_status w4a16_workspace_size(const w4a16_kernel_desc *kernel,
                                            const w4a16_problem *problem, int sm_count,
                                            size_t *bytes);

/**
 * Run D = alpha * A . dequant(W)^T (+ bias) on stream.
 *
 * kernel: the kernel to run, or NULL to select one (config cache, else heuristic).
 * workspace / workspace_bytes: device memory of at least w4a16_workspace_size()
 * (may be NULL / 0 when that is 0). With kernel NULL any workspace works: where the
 * selected kernel would split K (split-K, stream-K) into more than workspace_bytes, it
 * runs unsplit (slower on problems of few output tiles; WORKSPACE_TOO_SMALL is for a
 * kernel given).
 *
 * Asynchronous; allocates nothing; can be captured in a CUDA graph. Nothing is
 * launched and nothing is written when a check fails. M = 0 returns OK at once once the problem
 * (and the kernel given, if any: can_implement) passes: nothing is launched, no pointer is read
 * or checked (an empty batch may have NULL A and D), no device is asked. Host cost: an eager call takes the
 * calling thread about 3-4 us (H100 hosts, CUDA 13; most of it the launch itself; split-K
 * adds a second launch), as long as a decode-sized kernel runs, so an eager stream of small
 * layers goes at the host's pace: capture decode steps in a graph (`w4a16_bench --eager`
 * measures both).
 *
 * Ordering: on sm_90 the kernels use programmatic dependent launch (unless args.flags has
 * W4A16_GEMM_NO_PDL, which keeps the call's first kernel in plain stream order): they may start
 * while the previous kernel on the stream is finishing, and they may read the quantized
 * weights - the packed weights, scales and zeros, and a_perm - (never A or bias, and never
 * write D or the workspace) before waiting for it. So the kernel immediately before w4a16_gemm
 * on the same stream must not write the packed weights, scales, zeros or a_perm (copies and
 * other operations are fine; they are normally written once, at load time). A kernel
 * may also let the next kernel on the stream start early; that kernel still waits for
 * this one to complete before it reads anything this one writes. Statuses: OK; NULL_POINTER,
 * INVALID_SHAPE, MISALIGNED, UNSUPPORTED_GROUP_SIZE, INVALID_VALUE (bad argument);
 * DTYPE_MISMATCH, MODE_MISMATCH, NOT_SUPPORTED (kernel cannot implement it);
 * WORKSPACE_TOO_SMALL; ARCH_MISMATCH (kernel not built for the current device's
 * architecture, never launched); NO_KERNEL (no kernel fits, when kernel is NULL);
 * NO_DEVICE; CUDA_ERROR (launch failed; see w4a16_last_cuda_error()).
 */
W4A16_API w4a16_status w4a16_gemm(const w4a16_gemm_args *args, const w4a16_kernel_desc *kernel,
                                  void *workspace, size_t workspace_bytes, void *stream);

/**
 * The act-order activation gather: out[m, k] = a[m, perm[k]] for m < M, k < K.
 *
 * An act-order (GPTQ desc_act) weight is stored with its K columns sorted by group
 * (perm = argsort(g_idx)), so its GEMM takes the activations' columns in that order: call this,
 * then w4a16_gemm on out. a: [M, lda] F16 or BF16 on the device (2-byte aligned; any lda >= K);
 * perm: int32 [K] on the device, 16-byte aligned, a permutation of 0..K-1 (an index outside
 * [0, K) reads nothing and writes a NaN); out: [M, ldo], 16-byte aligned, ldo >= K a multiple of
 * 8, not overlapping A. K a positive multiple of 8.
 *
 * Asynchronous on stream; allocates nothing; can be captured in a CUDA graph. Ordering as
 * w4a16_gemm's: on sm_90 it may start while the previous kernel is finishing and reads perm
 * (never A) before waiting for it, and it lets the next kernel start at once (a GEMM after it
 * streams its weights while the gather runs). M = 0: OK, nothing launched, no pointer read.
 * Statuses: OK; INVALID_VALUE (dtype, or out overlapping A), INVALID_SHAPE (M < 0, K, lda,
 * ldo), MISALIGNED, NULL_POINTER; NO_DEVICE; CUDA_ERROR (launch failed).
 */
W4A16_API w4a16_status w4a16_gather_k(const void *a, int64_t lda, const int32_t *perm, int64_t m, int64_t k,
                                      w4a16_dtype dtype, void *out, int64_t ldo, void *stream);

/* ------------------------------------------------------------------------- */
/* Grouped GEMM (mixture of experts)                                         */
/* ------------------------------------------------------------------------- */

/*
 * One launch computes E products over the experts of a mixture-of-experts layer:
 *
 *   for each expert e, for each grouped row r in [offsets[e], offsets[e+1]):
 *     D[r, :] = alpha * row_scale[r] * A[row_index[r], :] . dequant(W_e)^T
 *
 *   W_e     expert e's packed weights, [N, K] packed exactly as the dense layout (N*K/2 bytes);
 *           the E experts back to back: w + e * N*K/2
 *   scales  [E, G, N] (zeros likewise, FINEGRAINED_SCALE_AND_ZEROS), dtype of A
 *   offsets [E + 1] on the device, int32 or int64 (offsets_type): expert e owns the grouped
 *           rows [offsets[e], offsets[e+1]) (torch._grouped_mm's offs are offsets[1..E] with
 *           offsets[0] = 0). The host never reads them: the call is graph-safe and never
 *           synchronises. An expert without rows costs no weight traffic.
 *   row_index  NULL: A is [rows, lda] in grouped order (A row r is grouped row r); else int32
 *           [rows] on the device: grouped row r reads token row row_index[r] of A ([a_rows, lda]),
 *           gathered inside the kernel (no separate permute), or by a row-gather kernel into the
 *           workspace before the Hopper form's 256-token tile (w4a16_grouped_gemm_workspace_size)
 *   row_scale  NULL, or float32 [rows] on the device, applied to each grouped row in the
 *           epilogue (the router's top-k weight)
 *   D       [rows, ldd], grouped order; only the rows of valid experts are written
 *
 * rows is an upper bound of offsets[E] that the host knows without reading the offsets (e.g.
 * tokens x top-k): the launch grid is sized by it and by E.
 * Bad offsets: an expert whose offsets are not 0 <= offsets[e] <= offsets[e+1] <= rows is skipped
 * (nothing read or written for it; no access ever leaves the buffers), and a row index outside
 * [0, a_rows) reads zeros. When status is given, the launch writes the device int *status: 0 when
 * every offset and row index was valid, else an OR of W4A16_GROUPED_BAD_* bits (read it after
 * the stream reaches the call; every call writes it, nothing needs clearing).
 */
#define W4A16_GROUPED_BAD_ORDER 1     /* an expert's end offset is below its start (decreasing) */
#define W4A16_GROUPED_BAD_RANGE 2     /* an offset below 0 or past rows */
#define W4A16_GROUPED_BAD_ROW_INDEX 4 /* a row index outside [0, a_rows) */

/** Element type of the device offsets. */
typedef enum w4a16_index_type { W4A16_INDEX_INT32 = 0, W4A16_INDEX_INT64 = 1 } w4a16_index_type;

/**
 * Arguments of one grouped GEMM. Zero-initialize, then set struct_size: a later version may add
 * fields at the end and will accept the struct_size of every earlier version; a struct_size this
 * library does not know is INVALID_VALUE.
 *  struct_size  sizeof(w4a16_grouped_gemm_args)
 *  experts      E >= 1 (< 2^20)
 *  rows         upper bound of offsets[E], >= 0 (< 2^31); 0: nothing is launched
 *  n, k         each expert's weight shape [N, K]: N % 16 == 0, K % 64 == 0 (as the dense problem)
 *  lda, ldd     row strides of A and D (elements; 0 means K, N), multiples of 8
 *  a_rows       rows of A when row_index is given (row indices must lie in [0, a_rows)); else
 *               ignored (A has rows rows)
 *  group_size, mode, dtype   as w4a16_problem (one group size and mode for every expert)
 *  offsets_type  W4A16_INDEX_INT32 or W4A16_INDEX_INT64
 *  a, w, scales, zeros, d   device pointers, 16-byte aligned (zeros only with
 *               FINEGRAINED_SCALE_AND_ZEROS)
 *  offsets      device [E + 1], 4- or 8-byte aligned as its type
 *  row_index    device int32 [rows], or NULL
 *  row_scale    device float32 [rows], or NULL
 *  alpha        scale of every product
 *  status       device int, or NULL (see above)
 *  flags        0, or W4A16_GEMM_NO_PDL: the launch in plain stream order, as w4a16_gemm_args.flags
 *               (set it where the kernel before the call is not one of this library's, e.g. the
 *               router's or the activation's torch kernels). Absent from the first version of this
 *               struct, whose struct_size (offsetof(w4a16_grouped_gemm_args, flags)) is accepted and
 *               reads as flags 0.
 */
typedef struct w4a16_grouped_gemm_args {
  size_t struct_size;
  int64_t experts, rows, n, k, lda, ldd, a_rows;
  int group_size;
  w4a16_quant_mode mode;
  w4a16_dtype dtype;
  w4a16_index_type offsets_type;
  const void *a;
  const void *w;
  const void *scales;
  const void *zeros;
  const void *offsets;
  const int32_t *row_index;
  const float *row_scale;
  void *d;
  float alpha;
  int *status;
  unsigned flags; /* W4A16_GEMM_* bits */
} w4a16_grouped_gemm_args;

/** Number of grouped kernels compiled into this library (a table apart from w4a16_kernel_get's). */
W4A16_API size_t w4a16_grouped_kernel_count(void);
/** Grouped kernel i in name order, or NULL if i >= w4a16_grouped_kernel_count(). */
W4A16_API const w4a16_kernel_desc *w4a16_grouped_kernel_get(size_t i);
/** The grouped kernel of that exact name, or NULL (then the thread's message names it). */
W4A16_API const w4a16_kernel_desc *w4a16_grouped_kernel_find(const char *name);

/**
 * Whether grouped kernel can run args (host-side: shapes, strides, group size, enums, the
 * kernel's own rules; pointers are not looked at, no GPU needed). OK, or the status of the first
 * violated rule with a message (as w4a16_can_implement; NOT_SUPPORTED for a kernel that is not
 * grouped, and for a kernel of the Hopper form (family SM90) or of the TMA decode form (family
 * GEMV, schedule GEMV_TMA) with more than 256 experts; INVALID_VALUE for a bad struct_size, experts,
 * offsets_type or flags).
 */
W4A16_API w4a16_status w4a16_grouped_can_implement(const w4a16_kernel_desc *kernel,
                                                   const w4a16_grouped_gemm_args *args);

/**
 * Bytes of device workspace w4a16_grouped_gemm needs for args with kernel, written to *bytes: with
 * a row index, a kernel of the Hopper form (family SM90) whose token tile (tile_m) is 256 gathers
 * A's rows into grouped order first, into rows x K x 2 bytes (rounded up to 256) of workspace, and
 * reads them there (its in-kernel gather feeds that tile worst); every other kernel needs none (0).
 * kernel NULL: what the selection may take on any device (no device is asked): those bytes where
 * args has a row index and at least 512 rows a used expert (rows / min(E, rows); 256 where one
 * expert's packed weights, N K / 2 bytes, pass 16 MB, whatever the SM count), else 0. Its
 * contents before a call do not matter; one workspace must not serve two launches that may run at
 * the same time, nor overlap A. Statuses: as w4a16_grouped_can_implement.
 */
W4A16_API w4a16_status w4a16_grouped_gemm_workspace_size(const w4a16_kernel_desc *kernel,
                                                         const w4a16_grouped_gemm_args *args,
                                                         size_t *bytes);

/**
 * Ranked grouped kernels for args on the current device (sm_count 0) or on a device of sm_count
 * multiprocessors: at most `requested`, best first, in out[0 .. *returned). The rule: the
 * streaming decode form (family GEMV) while the rows average at most 8 a used expert (rows /
 * min(E, rows)): on sm_90a its TMA schedule (token tile 8, 64-row column blocks; 128 where K is a
 * multiple of 256 but not of 512 and the units fill the CTAs, 32 where K >= 4096 and the 64-row
 * units fall unevenly on the CTAs), elsewhere the cp.async one (its tile by the CTAs it gives);
 * above 32 rows a used expert, above 16 where K >= 2048, from 16 where one expert's packed weights
 * (N K / 2 bytes) pass 16 MB, and at 16 to 24 rows a used expert where the experts with rows
 * expected times ceil(N / 256) make at least two units an SM, the Hopper tensor-core form (family
 * SM90, sm_90a: in that last case token tile 32 with 256 weight rows and four consumer warpgroups;
 * else token tile 96 above 56 up to 80 rows a used expert where the 96-token units (experts with
 * rows expected x ceil(rows a used expert / 96) x ceil(N / 128)) make at least four rounds of one
 * CTA an SM; 64 up to 64 rows a used expert, tile_k 128 with a row index and 256 without; 128
 * above; 256 from 512 rows a used expert, and from 256 where one expert's packed weights pass
 * 16 MB and the 256-token units (experts with rows expected x ceil(rows a used expert / 256) x
 * ceil(N / 128)) make at least four rounds of one CTA an SM,
 * which with a row index gathers the rows into the workspace first: the ranking assumes the
 * workspace of w4a16_grouped_gemm_workspace_size); else the sm80-class tensor-core form (family
 * SM80), its token tile by the rows a used expert. Statuses: OK, NULL_POINTER, INVALID_VALUE
 * (requested < 1), the argument checks' statuses, NO_DEVICE, NO_KERNEL (none can run args;
 * *returned 0).
 */
W4A16_API w4a16_status w4a16_grouped_heuristic_query(const w4a16_grouped_gemm_args *args, int sm_count,
                                                     int requested, const w4a16_kernel_desc *out[],
                                                     int *returned);

/**
 * Run the grouped GEMM on stream. kernel: a grouped kernel, or NULL to take the heuristic's first
 * (w4a16_grouped_heuristic_query's rule, kept in a per-process memo keyed by the arguments' shape
 * fields, E, rows, N, K, lda, ldd, group size, mode, dtype, whether there is a row index and
 * whether the workspace holds the gathered rows, and the device: a repeated call runs no query).
 * workspace / workspace_bytes: device memory, 16-byte aligned, of at least
 * w4a16_grouped_gemm_workspace_size() for a kernel given (else WORKSPACE_TOO_SMALL); with kernel
 * NULL any workspace works: where it cannot hold the gathered rows, the selection ranks as without
 * room for them (the 128-token tile, whose warps gather the rows in the kernel). A kernel that
 * gathers first launches a row-gather kernel (runtime/cuda/gather_rows.cu) before itself; a row
 * index outside [0, a_rows) gathers a zero row there and is reported in *status as in the kernel.
 * Asynchronous, allocates nothing, never reads the offsets on the host: can be captured in a CUDA
 * graph. Nothing is launched when a check fails; rows = 0 returns OK without a launch (and without
 * writing *status). Statuses: as w4a16_gemm (NULL_POINTER, INVALID_SHAPE, MISALIGNED,
 * UNSUPPORTED_GROUP_SIZE, INVALID_VALUE, DTYPE_MISMATCH, MODE_MISMATCH, NOT_SUPPORTED,
 * WORKSPACE_TOO_SMALL, ARCH_MISMATCH, NO_KERNEL, NO_DEVICE, CUDA_ERROR).
 */
W4A16_API w4a16_status w4a16_grouped_gemm(const w4a16_grouped_gemm_args *args, const w4a16_kernel_desc *kernel,
                                          void *workspace, size_t workspace_bytes, void *stream);

/* ------------------------------------------------------------------------- */
/* Host helpers: quantize, pack, reference                                   */
/* ------------------------------------------------------------------------- */

/** Element type of host weight arrays given to w4a16_quantize. */
typedef enum w4a16_host_type {
  W4A16_HOST_F32 = 0,
  W4A16_HOST_F16 = 1, /* IEEE binary16 bits in uint16_t */
  W4A16_HOST_BF16 = 2 /* bfloat16 bits in uint16_t */
} w4a16_host_type;

/**
 * Quantize host weights to 4-bit codes, round-to-nearest.
 *  weights  host, logical [N,K] row-major, of type wtype
 *  codes    host, [N,K] uint8 codes in [0,15] (one code per byte, unpacked)
 *  scales   host, [G,N] of dtype (uint16_t bits), G = K / group_size (1 per-column)
 *  zeros    host, [G,N] of dtype for FINEGRAINED_SCALE_AND_ZEROS, else may be NULL
 *  group_size  32, 64, 128, 256 (the FINEGRAINED modes), or 0 / K in every mode: one group
 *           per column (per-column scales; with FINEGRAINED_SCALE_AND_ZEROS per-column zero
 *           points)
 * Symmetric modes: s = max|w| / 7.5 and q = clamp(rint(w / s) + 8, 0, 15), the whole code
 * range (GPTQ's symmetric rule: scale 2 max|w| / 15 around the code 8; the largest positive
 * weight lands half a step past code 15 and is clamped); asymmetric: s = (max - min) / 15,
 * z = min (so w ~ s*q + z). Scales and zeros are rounded to dtype first and the codes computed
 * from the rounded values (rint: ties to even).
 * Statuses: OK, NULL_POINTER, INVALID_SHAPE, UNSUPPORTED_GROUP_SIZE, INVALID_VALUE (a bad
 * enum, a weight that is not finite, or a group whose scale or zero point overflows dtype,
 * e.g. |w| > 7.5 x 65504 in fp16; the message names the row and group; codes, scales and
 * zeros are then partly written), OUT_OF_MEMORY.
 */
W4A16_API w4a16_status w4a16_quantize(const void *weights, w4a16_host_type wtype, int64_t n,
                                      int64_t k, w4a16_quant_mode mode, int group_size,
                                      w4a16_dtype dtype, uint8_t *codes, uint16_t *scales,
                                      uint16_t *zeros);

/**
 * Options of w4a16_quantize_ex. Zero-initialize, then set struct_size: a later version may add
 * fields at the end and will accept the struct_size of every earlier version (the fields such a
 * caller cannot set then take their defaults); a struct_size this library does not know is
 * INVALID_VALUE.
 *  struct_size  sizeof(w4a16_quantize_options)
 *  clip_search  nonzero: per group, try the ranges p x [min, max] (symmetric: p x max|w|) for
 *               p = 1, 1 - 1/grid, 1 - 2/grid, ... while fewer than max_shrink x grid tried, and
 *               keep the one whose dequantized weights have the smallest squared error (the first
 *               on ties; p = 1 is the plain rule, so the error never grows). GPTQ's "mse" range
 *               search (grid 100, max_shrink 0.8), with the squared error as the norm.
 *  grid         steps of p (0 = 100; at most 10000)
 *  max_shrink   fraction of the range the search may cut (0 = 0.8; in (0, 1))
 */
typedef struct w4a16_quantize_options {
  size_t struct_size;
  int clip_search;
  int grid;
  float max_shrink;
} w4a16_quantize_options;

/**
 * w4a16_quantize with options (NULL: the plain rule, as w4a16_quantize). The search costs
 * about grid x max_shrink times the plain rule. Statuses: as w4a16_quantize, and
 * INVALID_VALUE for options out of range (named).
 */
W4A16_API w4a16_status w4a16_quantize_ex(const void *weights, w4a16_host_type wtype, int64_t n,
                                         int64_t k, w4a16_quant_mode mode, int group_size,
                                         w4a16_dtype dtype, const w4a16_quantize_options *options,
                                         uint8_t *codes, uint16_t *scales, uint16_t *zeros);

/**
 * Bytes of the packed weight buffer for [N,K]: N*K/2. Sets *bytes.
 * Needs N % 16 == 0 and K % 64 == 0 (INVALID_SHAPE otherwise).
 */
W4A16_API w4a16_status w4a16_packed_size(int64_t n, int64_t k, size_t *bytes);

/**
 * Pack logical [N,K] codes (one uint8 in [0,15] per element, row-major) into the
 * kernels' layout (docs/LAYOUT.md): 16x64 (n x k) tiles, each 512 bytes holding
 * 32 lanes x 16 bytes of mma-fragment-ordered, nibble-interleaved codes.
 * All families read this same layout. packed: host, w4a16_packed_size bytes.
 * Statuses: OK, NULL_POINTER, INVALID_SHAPE, INVALID_VALUE (a code > 15).
 */
W4A16_API w4a16_status w4a16_pack_weights(const uint8_t *codes, int64_t n, int64_t k,
                                          void *packed);

/** The inverse of w4a16_pack_weights: packed -> logical [N,K] codes. */
W4A16_API w4a16_status w4a16_unpack_weights(const void *packed, int64_t n, int64_t k,
                                            uint8_t *codes);

/**
 * CPU reference: D = alpha * A . dequant(W)^T (+ bias) with float64 accumulation.
 * Host pointers; A, scales, zeros, bias hold dtype bits (uint16_t); codes are the
 * unpacked logical [N,K] codes; d is double [M,N] (row stride N).
 * Statuses: OK, NULL_POINTER; INVALID_SHAPE, MISALIGNED, UNSUPPORTED_GROUP_SIZE,
 * INVALID_VALUE (the problem checks of w4a16_can_implement); OUT_OF_MEMORY.
 */
W4A16_API w4a16_status w4a16_reference_gemm(const w4a16_problem *problem, const uint16_t *a,
                                            const uint8_t *codes, const uint16_t *scales,
                                            const uint16_t *zeros, const uint16_t *bias,
                                            float alpha, double *d);

/* bit conversions used by the host helpers (round-to-nearest-even) */
W4A16_API uint16_t w4a16_float_to_half(float f);
W4A16_API float w4a16_half_to_float(uint16_t h);
W4A16_API uint16_t w4a16_float_to_bf16(float f);
W4A16_API float w4a16_bf16_to_float(uint16_t b);

#ifdef __cplusplus
}
#endif

/* selection: heuristic query, profiler, config cache, logging */
#include "w4a16/select.h"

#endif /* W4A16_H */

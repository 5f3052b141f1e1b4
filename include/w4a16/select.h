/*
 * select.h - kernel selection: the heuristic (a rule table, ranked candidates
 * like cuBLASLt's heuristic query), the persisted config cache, per-problem
 * tuning, and the library's log callback. The last section ("Advanced") holds the
 * calls for tools and tuning: queries over a caller's table, the rule table itself,
 * the profiler and w4a16_tune.
 *
 * w4a16_gemm(args, NULL, ...) selects a kernel by: config cache hit for the
 * problem's M bucket, else the heuristic's first pick. w4a16_tune() profiles one
 * problem (w4a16_profile) and stores the ranking in the cache.
 *
 * Included by w4a16.h; may also be included on its own.
 */
#ifndef W4A16_SELECT_H
#define W4A16_SELECT_H

#include "w4a16/w4a16.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Logging                                                                   */
/* ------------------------------------------------------------------------- */

typedef enum w4a16_log_level {
  W4A16_LOG_DEBUG = 0,
  W4A16_LOG_INFO = 1,
  W4A16_LOG_WARNING = 2,
  W4A16_LOG_ERROR = 3
} w4a16_log_level;

/** "debug", "info", "warning", "error"; "?" for an unknown value. */
W4A16_API const char *w4a16_log_level_name(w4a16_log_level level);

/**
 * Receives the library's diagnostics (one line, no trailing newline), e.g. a
 * stale or corrupt config cache being ignored. Called from the thread that
 * noticed; must not call back into w4a16.
 */
typedef void (*w4a16_log_fn)(w4a16_log_level level, const char *message, void *user);

/**
 * Installs fn (user is passed back to it). NULL restores the default, which
 * writes "w4a16: warning: ..." lines of level >= min_level to stderr, where
 * min_level is WARNING unless $W4A16_LOG_LEVEL names another
 * (debug|info|warning|error|off). Thread-safe.
 */
W4A16_API void w4a16_set_log_callback(w4a16_log_fn fn, void *user);

/* ------------------------------------------------------------------------- */
/* Heuristic                                                                 */
/* ------------------------------------------------------------------------- */

/**
 * One ranked candidate of a heuristic query.
 *  kernel            the kernel (a registry entry, or an entry of the caller's table)
 *  workspace_bytes   device workspace it needs for the problem
 *  split_k           K splits the runtime launches it with for this problem
 *                    (w4a16_gemm's own choice; 1 = none)
 *  waves_efficiency  ctas / (ceil(ctas / sm_count) * sm_count), ctas =
 *                    ceil(M / tile_m) * (N / tile_n) * split_k; in (0, 1]
 *  estimated_us      the cost model's time (for ranking within a rule; not a
 *                    measurement)
 *  rule              name of the rule that ranked it ("fallback" when none did);
 *                    a static string
 *  rule_index        index of that rule in the rule table, -1 for "fallback"
 */
typedef struct w4a16_heuristic_result {
  const w4a16_kernel_desc *kernel;
  size_t workspace_bytes;
  int split_k;
  float waves_efficiency;
  float estimated_us;
  const char *rule;
  int rule_index;
} w4a16_heuristic_result;

/**
 * Ranked candidates for problem on the current device: at most `requested`
 * kernels, best first, written to out[0 .. *returned). Only kernels that can
 * implement the problem (w4a16_can_implement) and were built for the device's
 * architecture (sm_min <= cc <= sm_max and an image for the device) are
 * returned. Rule tiers come first in rule order; within a tier, and in the
 * fallback tier that holds every other kernel that can implement the problem,
 * candidates are ordered by the cost model (wave quantization, M padding,
 * split-K, family throughput).
 * Statuses: OK (*returned >= 1), NULL_POINTER, INVALID_VALUE (requested < 1), the
 * problem's own status (INVALID_SHAPE, MISALIGNED, UNSUPPORTED_GROUP_SIZE, ...),
 * NO_DEVICE, NO_KERNEL (*returned == 0, the message says why).
 */
W4A16_API w4a16_status w4a16_heuristic_query(const w4a16_problem *problem, int requested,
                                             w4a16_heuristic_result out[], int *returned);

/* ------------------------------------------------------------------------- */
/* Config cache                                                              */
/* ------------------------------------------------------------------------- */

/**
 * What a cache file is valid for; a file whose header differs in any field
 * (or in format or library version) is stale and ignored.
 */
typedef struct w4a16_cache_env {
  char device_name[256];
  int sm_count;
  int cc;                        /* major*10+minor */
  int cuda_runtime;              /* cudaRuntimeGetVersion(), e.g. 13000 */
  uint64_t registry_fingerprint; /* w4a16_registry_fingerprint() */
} w4a16_cache_env;

/** The environment of the current CUDA device and this library. NO_DEVICE without a GPU. */
W4A16_API w4a16_status w4a16_cache_env_current(w4a16_cache_env *env);

/**
 * The cache file path: $W4A16_CACHE_PATH, else $XDG_CACHE_HOME/w4a16/configs.tsv,
 * else $HOME/.cache/w4a16/configs.tsv. IO_ERROR if none can be formed,
 * INVALID_VALUE if it does not fit in size bytes.
 */
W4A16_API w4a16_status w4a16_cache_default_path(char *path, size_t size);

/** The M bucket of the cache: the next power of two >= m, at most 8192 (m >= 1). */
W4A16_API int64_t w4a16_cache_m_bucket(int64_t m);

/** The cache file format version written in the header. */
#define W4A16_CACHE_FORMAT_VERSION 1

/**
 * A config cache: an in-memory map (M bucket, N, K, group size, mode, dtype) ->
 * ranked kernel names, backed by a text file. Thread-safe.
 */
typedef struct w4a16_config_cache w4a16_config_cache;

/**
 * Opens a cache. path: the file (NULL = w4a16_cache_default_path()); env: what
 * the file must match (NULL = w4a16_cache_env_current()); table/count: the
 * kernels names resolve against (NULL/0 = the registry). The file is read now
 * if it exists; a stale, truncated or corrupt file, or an entry naming an
 * unknown kernel, is skipped with a warning through the log callback.
 * Statuses: OK, NULL_POINTER, NO_DEVICE (env NULL and no GPU), CUDA_ERROR (env
 * NULL: a device query failed), IO_ERROR (no path), INVALID_VALUE (an empty path, or
 * the default one too long), OUT_OF_MEMORY.
 */
W4A16_API w4a16_status w4a16_config_cache_open(const char *path, const w4a16_cache_env *env,
                                               const w4a16_kernel_desc *table, size_t count,
                                               w4a16_config_cache **cache);
/** Frees the cache (the file stays). NULL is accepted. */
W4A16_API void w4a16_config_cache_close(w4a16_config_cache *cache);
/** Re-reads the file, replacing the in-memory entries. OK also when no file exists. */
W4A16_API w4a16_status w4a16_config_cache_reload(w4a16_config_cache *cache);
/** Number of entries in memory. */
W4A16_API size_t w4a16_config_cache_size(const w4a16_config_cache *cache);
/** The file path of the cache (owned by it). */
W4A16_API const char *w4a16_config_cache_path(const w4a16_config_cache *cache);

/**
 * The stored ranking for problem's key: up to capacity kernels, best first,
 * into kernels[0 .. *returned). No can_implement check here (the selector does
 * it). Statuses: OK (*returned >= 1), NULL_POINTER, NO_KERNEL (no entry).
 */
W4A16_API w4a16_status w4a16_config_cache_lookup(w4a16_config_cache *cache,
                                                 const w4a16_problem *problem,
                                                 const w4a16_kernel_desc *kernels[],
                                                 int capacity, int *returned);

/**
 * Entry index (0 <= index < w4a16_config_cache_size(); entries in key order: dtype, mode,
 * N, K, group size, M bucket) of the cache: its key as a
 * problem (m = the M bucket, group_size = the effective group, K for per-column;
 * lda = ldd = has_bias = 0) and up to capacity of its kernels, best first.
 * Statuses: OK, NULL_POINTER, INVALID_VALUE (index out of range, capacity < 1).
 */
W4A16_API w4a16_status w4a16_config_cache_entry(w4a16_config_cache *cache, size_t index,
                                                w4a16_problem *key,
                                                const w4a16_kernel_desc *kernels[], int capacity,
                                                int *returned);

/**
 * Stores kernels[0 .. count) (best first; at most 16 kept) for problem's key
 * and writes the file: under an exclusive lock on "<path>.lock", re-reads the
 * file, merges (entries of other processes are kept; this key is replaced) and
 * replaces it atomically (temporary file + rename). A stale or corrupt file is
 * replaced (with a warning). Creates the folder if needed.
 * Statuses: OK, NULL_POINTER, INVALID_VALUE (count < 1, a kernel not in the
 * cache's table), IO_ERROR (then the in-memory entry is still stored).
 */
W4A16_API w4a16_status w4a16_config_cache_store(w4a16_config_cache *cache,
                                                const w4a16_problem *problem,
                                                const w4a16_kernel_desc *const kernels[],
                                                int count);

/**
 * The process-wide cache used by w4a16_gemm for the current device (opened on
 * first use, default path). NULL when it cannot be opened (no GPU, no path).
 * One file holds one environment (w4a16_cache_env): devices of different models
 * (or builds of this library with other kernels) sharing the default path replace
 * each other's entries on their stores; give each its own W4A16_CACHE_PATH.
 */
W4A16_API w4a16_config_cache *w4a16_config_cache_default(void);

/* ------------------------------------------------------------------------- */
/* Selection                                                                 */
/* ------------------------------------------------------------------------- */

/** Where w4a16_select() found its kernel. */
typedef enum w4a16_selection_source {
  W4A16_SELECTED_BY_CACHE = 0,
  W4A16_SELECTED_BY_HEURISTIC = 1
} w4a16_selection_source;

/**
 * The kernel w4a16_gemm(args, NULL, ...) would run for problem on the current
 * device: the process-wide cache's first entry that can implement it, else the
 * heuristic's first pick. *source (may be NULL) says which.
 * Statuses: OK, NULL_POINTER; INVALID_SHAPE, MISALIGNED, UNSUPPORTED_GROUP_SIZE,
 * INVALID_VALUE (the problem checks of w4a16_can_implement); NO_DEVICE, CUDA_ERROR (the
 * device query); NO_KERNEL.
 */
W4A16_API w4a16_status w4a16_select(const w4a16_problem *problem,
                                    const w4a16_kernel_desc **kernel,
                                    w4a16_selection_source *source);

/* ========================================================================= */
/* Advanced: rule tables, the profiler and tuning. For tools, tests and tuning */
/* runs; these may change with a minor version (see w4a16.h, Compatibility). */
/* ========================================================================= */

/**
 * Options of w4a16_heuristic_query_ex: the kernels, the rules and the device to rank for.
 * Zero-initialize, then set struct_size and the fields you need (a later version may add
 * fields at the end; see w4a16.h, Compatibility).
 *  struct_size  sizeof(w4a16_heuristic_query_options)
 *  table, count the kernels to rank (e.g. a fake registry with impl == NULL, or the
 *               registry: w4a16_kernel_get(0) and w4a16_kernel_count()); NULL and 0: none
 *  rules, rule_count  the rule table (NULL and 0: the built-in one, w4a16_heuristic_rules)
 *  sm_count     multiprocessors of the device (>= 1)
 *  cc           its compute capability, major*10+minor (>= 10)
 *  mem_gbps     its peak DRAM bandwidth in GB/s (10^9 bytes/s; see w4a16_heuristic_rule's
 *               mem_gbps_min); 0 = unknown: rules that bound the bandwidth from below match
 *               nothing
 */
typedef struct w4a16_heuristic_query_options {
  size_t struct_size;
  const w4a16_kernel_desc *table;
  size_t count;
  const struct w4a16_heuristic_rule *rules;
  size_t rule_count;
  int sm_count;
  int cc;
  int mem_gbps;
} w4a16_heuristic_query_options;

/**
 * As w4a16_heuristic_query for the kernels, rules and device that options describe; needs no
 * GPU (no architecture probe of the kernels: only their sm_min..sm_max). Statuses as
 * w4a16_heuristic_query, and NULL_POINTER (options NULL; table NULL with count > 0; rules NULL
 * with rule_count > 0), INVALID_VALUE (struct_size, sm_count < 1, cc < 10, mem_gbps < 0;
 * named in the message).
 */
W4A16_API w4a16_status w4a16_heuristic_query_ex(const w4a16_problem *problem,
                                                const w4a16_heuristic_query_options *options,
                                                int requested, w4a16_heuristic_result out[],
                                                int *returned);

/**
 * A heuristic rule: when the problem and device fall in the ranges (inclusive;
 * a max of 0 means unbounded), the kernels that match the kernel conditions form
 * the rule's tier. Rules are tried in table order; a kernel belongs to the
 * first rule it matches.
 *  family             W4A16_FAMILY_* or -1 for any
 *  m_tiles_max        ceil(M / tile_m) <= m_tiles_max (0 = any)
 *  min_waves_eff      waves_efficiency >= this (0 = any)
 *  modes              the problem's quant mode has its bit (1u << w4a16_quant_mode) set
 *                     (0 = any mode)
 *  group_max          the problem's group_size <= group_max (0 = any; per-column problems
 *                     carry group_size = K)
 *  threads_min/_max   the kernel's threads per CTA (0 = no bound): tells the sm90 cooperative
 *                     kernels with four consumer warpgroups (640 threads, name suffix "_wg4")
 *                     from those with two (384) of the same tile
 *  cluster_max        the kernel's CTAs per thread-block cluster (cluster_n x cluster_m x
 *                     cluster_k) at most this (0 = any): 1 keeps a row to kernels without clusters
 *  cluster_min        the same count at least this (0 = any): 2 keeps a row to cluster kernels
 *  dtypes             the problem's dtype has its bit (1u << w4a16_dtype) set (0 = any dtype)
 *  schedules          the kernel's schedule has its bit (1u << w4a16_schedule) set (0 = any):
 *                     tells the sm_90 TMA-streaming GEMV kernels from the register-staged ones
 *                     of the same tiles and stages
 *  mem_gbps_min/_max  the device's peak DRAM bandwidth in GB/s (10^9 bytes/s: 2 x memory clock x
 *                     bus width / 8, from cudaDevAttrMemoryClockRate and
 *                     cudaDevAttrGlobalMemoryBusWidth; as reported: H100 SXM 3352, H200 4814); 0 = no bound. A
 *                     device whose bandwidth is unknown (0 in w4a16_heuristic_query_ex) matches
 *                     no row with mem_gbps_min > 0: tells the H200 from the H100, which share
 *                     cc 9.0 and 132 SMs but not the balance of a decode GEMV
 * Within a tier, kernels rank by the cost model's estimate, then the deeper pipeline, then
 * fewer threads, then name.
 */
typedef struct w4a16_heuristic_rule {
  const char *name;
  /* problem and device */
  int64_t m_min, m_max;
  int64_t n_min, n_max;
  int64_t k_min, k_max;
  int sm_count_min, sm_count_max;
  int cc_min, cc_max;
  /* kernel */
  int family;
  int tile_m_min, tile_m_max;
  int tile_n_min, tile_n_max;
  int stages_min, stages_max;
  int m_tiles_max;
  float min_waves_eff;
  int tile_k_min, tile_k_max; /* 0 = no bound (after the fields above, so older initializers leave it open) */
  unsigned modes;             /* problem: quant-mode bit mask, 0 = any */
  int group_max;              /* problem: group_size <= group_max, 0 = any (last, likewise) */
  int threads_min, threads_max; /* kernel: threads per CTA, 0 = no bound (last, likewise) */
  int cluster_max;              /* kernel: CTAs per cluster at most, 0 = any (last, likewise) */
  unsigned schedules;           /* kernel: schedule bit mask, 0 = any (last, likewise) */
  int cluster_min;              /* kernel: CTAs per cluster at least, 0 = any (last, likewise) */
  unsigned dtypes;              /* problem: dtype bit mask, 0 = any (last, likewise) */
  int mem_gbps_min, mem_gbps_max; /* device: peak DRAM bandwidth, GB/s, 0 = no bound (last, likewise) */
} w4a16_heuristic_rule;

/** The built-in rule table (static; *count set to its length). */
W4A16_API const w4a16_heuristic_rule *w4a16_heuristic_rules(size_t *count);

/* --- profiler (runtime/profile.c) --- */

/**
 * Options of w4a16_profile. Zero-initialized (or NULL) means the defaults.
 *  warmup            launches of each candidate before it is timed (0 = 5)
 *  iterations        timed rounds; in each, every candidate's sample is one
 *                    replay of its CUDA graph holding enough launches to cycle
 *                    every weight copy and last about 1 ms; the median sample /
 *                    launches is reported (0 = 10)
 *  rotate_min_bytes  bytes the rotating weight copies (packed W + scales +
 *                    zeros) must span so that every launch reads its weights
 *                    from HBM, not L2 (0 = 4 x the device's L2 size; capped by
 *                    free device memory)
 *  seed              seed of the random inputs (0 = a fixed default)
 */
typedef struct w4a16_profile_options {
  int warmup;
  int iterations;
  int rotate_min_bytes;
  unsigned seed;
} w4a16_profile_options;

/**
 * One row of the profiler's table.
 *  kernel     the candidate
 *  status     OK, or why it was skipped (its launch, capture or run failed)
 *  median_us  median time per launch in microseconds (0 when status != OK)
 *  tflops     2*M*N*K / time, in TFLOP/s
 *  gbps       effective bandwidth: (packed W + scales + zeros + A + D + bias)
 *             bytes / time, in GB/s (1e9 bytes per second)
 */
typedef struct w4a16_profile_result {
  const w4a16_kernel_desc *kernel;
  w4a16_status status;
  float median_us;
  float tflops;
  float gbps;
} w4a16_profile_result;

/**
 * Time every registered kernel that can implement problem on the current GPU
 * (w4a16_can_implement, and sm_min <= compute capability <= sm_max) on random
 * inputs (never zeros) that the profiler allocates, with its own workspace.
 * Weights rotate over copies that leave L2, candidates are warmed up, their
 * launches captured in a CUDA graph and the graph replays timed with events,
 * in rounds: each round replays every candidate once (the first one a step
 * further along each round), and a candidate's time is the median of its
 * rounds, so that the card's clock, which falls within tens of milliseconds
 * where a problem reaches its power limit, weighs on every candidate alike.
 *
 * results[0 .. *returned) receives the table: the candidates that ran, fastest
 * first, then the ones that failed (status != OK) in registry order;
 * *returned = min(requested, number of candidates). The table is complete
 * (every candidate is timed) whatever requested is.
 *
 * Not for use while other work runs on the device (it would skew the times).
 * Returns OK when at least one candidate ran; NO_KERNEL when none can
 * implement the problem here; NULL_POINTER, INVALID_VALUE (requested < 1,
 * negative options), a problem's own status (INVALID_SHAPE, ...); NO_DEVICE;
 * OUT_OF_MEMORY; CUDA_ERROR; or, when every candidate failed, the status of
 * the first one (the rows tell each candidate's).
 */
W4A16_API w4a16_status w4a16_profile(const w4a16_problem *problem,
                                     const w4a16_profile_options *options,
                                     w4a16_profile_result *results, int requested,
                                     int *returned);

/**
 * Time every grouped kernel that can implement args on the current GPU
 * (w4a16_grouped_can_implement, and sm_min <= compute capability <= sm_max) on
 * the caller's buffers: args' A, offsets, row index and row scale as given (the
 * routing is data the host never reads, so the caller's own routing is what is
 * timed), its weights, scales and zeros as copy 0 of the rotating weight copies.
 * The method is w4a16_profile's: the other copies are device-to-device copies of
 * the caller's weights, scales and zeros, enough to span options->rotate_min_bytes
 * (0: 4 x L2, capped by free device memory); each candidate is warmed up, its
 * launches over the copies captured in a CUDA graph, and the graphs replayed in
 * rounds, the median reported. options->seed is not used (no random inputs).
 *
 * The timed launches write args->d and args->status: afterwards D holds the
 * product (every candidate computes the same one) and the status word its
 * offsets' and row indices' check. The device is synchronized first (the
 * caller's buffers must hold their data when the call is made), and the call
 * returns with the profiler's work done.
 *
 * results[0 .. *returned): as w4a16_profile (fastest first, then the failures in
 * w4a16_grouped_kernel_get order; *returned = min(requested, candidates)), with
 *  tflops  2 * rows * N * K / time (rows: args->rows, the bound of offsets[E])
 *  gbps    (every expert's packed W + scales (+ zeros) + A [rows, K] + D [rows, N])
 *          bytes / time: an upper bound of the bytes moved, since experts without
 *          rows are not read
 *
 * Not for use while other work runs on the device. Statuses, all but the last
 * few before anything is launched: NULL_POINTER (args, results, returned, or a
 * pointer of args), INVALID_VALUE (requested < 1, negative options), the
 * argument checks of w4a16_grouped_gemm (INVALID_VALUE, INVALID_SHAPE,
 * MISALIGNED, UNSUPPORTED_GROUP_SIZE, ...; INVALID_SHAPE for rows = 0, which
 * launches nothing), NO_DEVICE, NO_KERNEL (no grouped kernel can implement args
 * here), OUT_OF_MEMORY, CUDA_ERROR; OK when at least one candidate ran, else
 * the status of the first one (the rows tell each candidate's).
 */
W4A16_API w4a16_status w4a16_grouped_profile(const w4a16_grouped_gemm_args *args,
                                             const w4a16_profile_options *options,
                                             w4a16_profile_result *results, int requested,
                                             int *returned);

/* --- end of profiler --- */

/* ------------------------------------------------------------------------- */
/* Tuning                                                                    */
/* ------------------------------------------------------------------------- */

/**
 * Profile problem on the current GPU (w4a16_profile with options, NULL = the
 * defaults) and store the ranking (up to 16 kernels that ran, fastest first) in
 * the process-wide config cache under the problem's key (M bucket, N, K, group,
 * mode, dtype), so later w4a16_gemm calls with no kernel pick it. results (may
 * be NULL) receives up to requested rows of the profiler's table, *returned
 * (may be NULL) their number.
 * Statuses: w4a16_profile's; IO_ERROR when the cache file could not be written
 * (the in-memory entry is still stored and used by this process).
 */
W4A16_API w4a16_status w4a16_tune(const w4a16_problem *problem, const w4a16_profile_options *options,
                                  w4a16_profile_result *results, int requested, int *returned);

#ifdef __cplusplus
}
#endif

#endif /* W4A16_SELECT_H */

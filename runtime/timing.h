/*
 * timing.h - internal: how w4a16 times a launch. One method, shared by the
 * profiler (runtime/profile.c) and the benchmark harness (bench/harness.c),
 * per docs/DESIGN.md, "Measuring":
 *
 *   - the weights rotate over enough copies to leave L2 (launch i reads copy
 *     i % copies; copies x bytes per copy >= 4 x L2 by default, bounded by free
 *     device memory), as real layers stream their weights from HBM;
 *   - one checked launch (its status and message are reported, nothing more is
 *     done with a candidate that fails), then warm-up launches;
 *   - L launches over the rotating copies captured in one CUDA graph, L chosen
 *     so that a replay lasts about 1 ms, a whole number of rounds over the copies
 *     (each copy equally often, and never reread from L2 across replays);
 *   - S back-to-back replays, each between two cudaEvents; per-launch time of a
 *     sample = its elapsed time / L; the median of the S samples is reported.
 *
 * Candidates compared with each other (w4a16_time_launches, the profiler) are
 * prepared alike, then timed in rounds: one untimed round, then S rounds, each
 * replaying every candidate's graph once, back to back between events, the
 * starting candidate one further along each round. Where a problem runs the card
 * into its power limit (M = 4096 on the large layers: the clock falls within tens
 * of milliseconds), timing candidates one after the other favours the first ones,
 * which run while the card is still cool (two kernels that run within 2 % of each
 * other time 1.32x apart that way); in rounds every
 * candidate sees the same mix of the card's states.
 *
 * Nothing is allocated between the first and the last event of a round.
 *
 * Eager timing (options.eager, w4a16_time_launch only): what a caller that launches without a graph
 * sees. Steps 1-3 as above (the same L launches over the copies, and the launch proven capturable),
 * then S samples, each: the stream drained, an event, L launches issued by the host one call after
 * the other over the rotating copies, an event. Per sample, the stream's time a launch is the events'
 * elapsed time / L (where the host issues more slowly than the GPU runs, that is the host's rate),
 * and the host's time a launch is the wall-clock time (CLOCK_MONOTONIC) of the L calls / L: what
 * a call costs the calling thread (argument checks, selection, the launch itself). Medians of each.
 */
#ifndef W4A16_TIMING_H
#define W4A16_TIMING_H

#include <stddef.h>
#include <stdint.h>

#include "w4a16/w4a16.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A launch to time. copy in [0, copies) selects the weight copy; stream is a
 * cudaStream_t. Returns OK, or a status with a one-line reason in msg.
 * Must allocate nothing and be capturable in a CUDA graph.
 */
typedef w4a16_status (*w4a16_timing_launch_fn)(void *ctx, int copy, void *stream, char *msg,
                                               size_t msg_cap);

typedef struct w4a16_timing_options {
  int warmup;               /* launches after the checked one (0 = 5) */
  int samples;              /* timed graph replays (0 = 10, at most 1000) */
  double replay_target_us;  /* wanted duration of one replay (0 = 1000 us) */
  int max_launches;         /* cap on launches per graph (0 = 1000; a multiple of copies, at least one round) */
  int relaxed_capture;      /* capture in cudaStreamCaptureModeRelaxed (else ThreadLocal, which
                               also proves the launch makes no unsafe call such as cudaMalloc) */
  int eager;                /* w4a16_time_launch: time launches issued by the host, not graph replays
                               (eager timing above; w4a16_time_launches refuses it) */
} w4a16_timing_options;

typedef struct w4a16_timing_result {
  w4a16_status status;  /* OK, or why the candidate was skipped */
  char message[320];    /* "" when OK */
  double median_us;     /* per launch */
  double min_us, max_us;
  int launches;         /* launches per graph replay */
  int samples;          /* replays timed */
  int copies;           /* weight copies rotated over */
  double host_us;       /* eager timing: the host's median time to issue one launch (µs); else 0 */
} w4a16_timing_result;

/* Time fn over copies weight copies on stream with the method above (options->eager: eager timing).
   Returns res->status. */
w4a16_status w4a16_time_launch(w4a16_timing_launch_fn fn, void *ctx, int copies, void *stream,
                               const w4a16_timing_options *options, w4a16_timing_result *res);

/* One candidate of w4a16_time_launches; copies: the weight copies its launches rotate over (0: the
   call's copies argument); relaxed_capture: captured in cudaStreamCaptureModeRelaxed whatever the
   options say (a library such as cuBLASLt that makes its own host calls while capturing). */
typedef struct w4a16_timing_candidate {
  w4a16_timing_launch_fn fn;
  void *ctx;
  int copies;
  int relaxed_capture;
} w4a16_timing_candidate;

/*
 * Time n candidates over copies weight copies on stream, in rounds (see above): options->samples
 * rounds, each candidate one replay of its graph per round. res[i] receives candidate i's result:
 * OK with its median, min and max over the rounds, or the status and message of its failure (it
 * then takes no turns). Returns OK when the rounds could be run (whatever each candidate's status);
 * NULL_POINTER (cands or res NULL) or INVALID_VALUE (n < 1) with the thread's message set and nothing
 * written; OUT_OF_MEMORY or CUDA_ERROR (its host buffers or events could not be made: every res[i]
 * then carries that status and message). A CUDA error during the rounds marks every candidate that
 * took turns CUDA_ERROR and still returns OK. INVALID_VALUE (nothing written) with options->eager:
 * eager launches are timed one candidate at a time.
 */
w4a16_status w4a16_time_launches(const w4a16_timing_candidate *cands, int n, int copies, void *stream,
                                 const w4a16_timing_options *options, w4a16_timing_result *res);

/* The current device's L2 cache size in bytes (50 MB if it cannot be queried). */
size_t w4a16_timing_l2_bytes(void);

/*
 * Weight copies to rotate over: ceil(rotate_min_bytes / copy_bytes) (rotate_min_bytes 0
 * means 4 x L2), at most budget_bytes / copy_bytes, and at least 1.
 */
int w4a16_timing_copies(size_t copy_bytes, size_t rotate_min_bytes, size_t budget_bytes);

/*
 * Device memory for rotating weight copies of copy_bytes each: *copies = w4a16_timing_copies(copy_bytes,
 * rotate_min_bytes, half the free device memory + the held copies' bytes), of which the first held
 * (>= 0) are buffers the caller already has (e.g. its own weights) and are not allocated: *rot receives
 * (*copies - held) x copy_bytes (NULL when that is 0; free with cudaFree), *copies halved while that
 * allocation fails for lack of memory; *copies >= max(held, 1). Returns OK, OUT_OF_MEMORY (not even
 * one copy fits) or CUDA_ERROR, with the thread's message set.
 */
w4a16_status w4a16_timing_alloc_copies(size_t copy_bytes, size_t rotate_min_bytes, int held, void **rot,
                                       int *copies);

/* Device fills from a seeded host generator (splitmix64), never all zeros.
   uniform: count elements of dtype in [lo, hi]; bytes: random bytes. */
w4a16_status w4a16_timing_fill_uniform(void *dev, size_t count, w4a16_dtype dtype, float lo,
                                       float hi, uint64_t seed);
w4a16_status w4a16_timing_fill_bytes(void *dev, size_t bytes, uint64_t seed);

/* 2*M*N*K. */
double w4a16_timing_flops(const w4a16_problem *p);
/* Bytes a W4A16 launch must move at least: packed W (N*K/2) + scales (+ zeros) [G,N]
   + A [M,K] + D [M,N] (+ bias [N]), 2 bytes per element. */
double w4a16_timing_bytes(const w4a16_problem *p);
/* Bytes per weight copy: packed W + scales (+ zeros), each rounded up to 256. */
size_t w4a16_timing_copy_bytes(const w4a16_problem *p);

/*
 * The inputs of one W4A16 problem on the current device: random A, bias,
 * rotating copies of packed W + scales (+ zeros), output D, a workspace that
 * grows as kernels need, and a non-blocking stream.
 */
typedef struct w4a16_timing_data w4a16_timing_data;

/* rotate_min_bytes 0 = 4 x L2. Returns OK, a problem status, NO_DEVICE, OUT_OF_MEMORY or CUDA_ERROR
   (with the thread's message set). */
w4a16_status w4a16_timing_data_create(const w4a16_problem *problem, size_t rotate_min_bytes,
                                      uint64_t seed, w4a16_timing_data **out);
void w4a16_timing_data_destroy(w4a16_timing_data *td);
/* Zero-point problems: replace the random float zeros of every copy by integer zero points, z = -s zq
   with zq uniform in 0..15 (seeded), rounded to the dtype: the zeros of GPTQ / AWQ / compressed-tensors
   checkpoints, which some kernels take faster (the TMA GEMV's per-column consumer). INVALID_VALUE for
   a problem without zeros; CUDA_ERROR or OUT_OF_MEMORY with the thread's message set. */
w4a16_status w4a16_timing_data_integer_zeros(w4a16_timing_data *td, uint64_t seed);
/* The problem as normalized (lda, ldd, group size filled in). */
const w4a16_problem *w4a16_timing_data_problem(const w4a16_timing_data *td);
int w4a16_timing_data_copies(const w4a16_timing_data *td);
/* Device pointers of A [M,lda] and D [M,ldd] (shared with other timed launches, e.g. cuBLAS). */
void *w4a16_timing_data_a(const w4a16_timing_data *td);
void *w4a16_timing_data_d(const w4a16_timing_data *td);
/* The cudaStream_t all launches of this data run on. */
void *w4a16_timing_data_stream(const w4a16_timing_data *td);

/* Time kernel on td through w4a16_gemm (workspace grown before timing if needed). */
w4a16_status w4a16_timing_data_time(w4a16_timing_data *td, const w4a16_kernel_desc *kernel,
                                    const w4a16_timing_options *options, w4a16_timing_result *res);

/* Time n kernels on td through w4a16_gemm with w4a16_time_launches (in rounds; the workspace is
   grown to the largest one's before any is prepared). res[i] is kernels[i]'s result; a kernel whose
   workspace size cannot be computed gets that status and is not timed. Returns as
   w4a16_time_launches. */
w4a16_status w4a16_timing_data_time_many(w4a16_timing_data *td, const w4a16_kernel_desc *const *kernels, int n,
                                         const w4a16_timing_options *options, w4a16_timing_result *res);

/* The same, with n_extra more candidates (a reference such as cuBLAS, on its own data) timed in the
   same rounds after the kernels: res[n + j] is extra[j]'s result (res holds n + n_extra; on
   OUT_OF_MEMORY every entry carries that status). */
w4a16_status w4a16_timing_data_time_with(w4a16_timing_data *td, const w4a16_kernel_desc *const *kernels, int n,
                                         const w4a16_timing_candidate *extra, int n_extra,
                                         const w4a16_timing_options *options, w4a16_timing_result *res);

#ifdef __cplusplus
}
#endif

#endif

/*
 * select.h - kernel selection: heuristic, profiler, config cache.
 * Included by the umbrella header w4a16/w4a16.h.
 */
#ifndef W4A16_SELECT_H
#define W4A16_SELECT_H

#include "w4a16/w4a16.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- profiler (runtime/profile.c) --- */

/**
 * Options of w4a16_profile. Zero-initialized (or NULL) means the defaults.
 *  warmup            launches of each candidate before it is timed (0 = 5)
 *  iterations        timed samples, each one replay of a CUDA graph holding
 *                    enough launches to cycle every weight copy and last about
 *                    1 ms; the median sample / launches is reported (0 = 10)
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
 * launches captured in a CUDA graph and the graph replays timed with events.
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

/* --- end of profiler --- */

#ifdef __cplusplus
}
#endif

#endif /* W4A16_SELECT_H */

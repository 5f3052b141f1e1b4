/* cublas_ref.h - the cuBLASLt reference the bench compares against: dense
   D[M,N] = A[M,K] . W[N,K]^T in fp16 or bf16 with fp32 compute, timed with the
   same method as the W4A16 kernels (runtime/timing.h), weights rotating. */
#ifndef W4A16_BENCH_CUBLAS_REF_H
#define W4A16_BENCH_CUBLAS_REF_H

#include <stddef.h>
#include <stdint.h>

#include "timing.h"
#include "w4a16/w4a16.h"

typedef struct bench_cublas bench_cublas;

/* The most heuristic algorithms timed per problem (max_algos is clamped to it). */
#define BENCH_CUBLAS_MAX_ALGOS 16

/* Handle + 32 MiB workspace. Returns 0, or -1 with a message in msg. */
int bench_cublas_create(bench_cublas **out, char *msg, size_t cap);
void bench_cublas_destroy(bench_cublas *cb);

typedef struct bench_cublas_result {
  w4a16_timing_result timing; /* of the best algorithm */
  int algo;                   /* index of the best in the heuristic's list */
  int algos_tried;            /* heuristic results timed */
  int copies;                 /* dense weight copies rotated over */
} bench_cublas_result;

/*
 * Time the dense product of problem p (its dtype, M, N, K, lda, ldd; mode and
 * group are ignored) on a [M,lda] and d [M,ldd] (device, on stream). Allocates
 * and fills its own rotating W copies (freed before returning). Times the
 * heuristic's first max_algos candidates and keeps the fastest.
 */
w4a16_status bench_cublas_time(bench_cublas *cb, const w4a16_problem *p, void *a, void *d, void *stream,
                               int max_algos, size_t rotate_min_bytes, uint64_t seed,
                               const w4a16_timing_options *to, bench_cublas_result *res);

/*
 * The same in parts, so that cuBLASLt's algorithms can be timed in the same rounds as the W4A16 kernels
 * (runtime/timing.h, w4a16_timing_data_time_with):
 *   bench_cublas_prepare   descriptors, the heuristic's first max_algos usable algorithms and the
 *                          rotating W copies; OK with *out set, or res says why (nothing to release);
 *   bench_cublas_candidates  one timing candidate per algorithm (its own copies, relaxed capture) into
 *                          out[0 .. cap), returns how many;
 *   bench_cublas_pick      res from the candidates' results r[0 .. n): the fastest (res->algo its index
 *                          in the heuristic's list), or the first failure;
 *   bench_cublas_release   frees the set after the stream's work is done.
 * The set's launches read a and write d as bench_cublas_time's do.
 */
typedef struct bench_cublas_set bench_cublas_set;
w4a16_status bench_cublas_prepare(bench_cublas *cb, const w4a16_problem *p, void *a, void *d, int max_algos,
                                  size_t rotate_min_bytes, uint64_t seed, bench_cublas_set **out,
                                  bench_cublas_result *res);
int bench_cublas_candidates(const bench_cublas_set *set, w4a16_timing_candidate *out, int cap);
void bench_cublas_pick(const bench_cublas_set *set, const w4a16_timing_result *r, int n, bench_cublas_result *res);
void bench_cublas_release(bench_cublas_set *set, void *stream);

#endif

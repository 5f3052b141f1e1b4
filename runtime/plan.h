/*
 * plan.h - the launch plan: how one w4a16_gemm call runs its kernel (split-K slices, stream-K and
 * its data-parallel tiles, the K pair, the persistent grid, prefetch, how the scale rows travel).
 *
 * w4a16_plan_launch (runtime/plan.c) is the one place that decides it. Selection's cost estimate and
 * the workspace query read the rules' part of the plan (W4A16_PLAN_RULES: split-K and stream-K as the
 * descriptor and the problem give them, and the workspace they reserve); w4a16_gemm computes the
 * whole plan with the kernel's facts (its compile-time configuration and the device's residency for
 * it) and hands it to the kernel's launch, which follows it without a choice of its own; the tests
 * ask the same function what a launch runs. The refinements that need the kernel's facts (the K pair,
 * the grid the device holds at once) never need more workspace than the rules reserve.
 *
 * Plain C: included by the runtime and by the kernels' host code (kernel_abi.h).
 */
#ifndef W4A16_PLAN_H
#define W4A16_PLAN_H

#include <stddef.h>

/* What an sm90 kernel instantiation tells the planner: its Cfg (runtime/cuda/sm90/sm90_config.cuh)
   and the device's residency for it (occupancy queries, once per kernel and SM count). */
struct w4a16_sm90_facts {
  int ctas_per_sm;          /* Cfg::kCtasPerSm */
  int pair_ok;              /* Cfg::kPairOk: the kernel runs the K pair */
  int pair_halves;          /* Cfg::kPairHalves: rank 1's accumulators go over in two halves */
  int pair_lead;            /* Cfg::kPairLead: the K pair's default lead (pair_halves only) */
  int streamk_dp;           /* Cfg::kStreamKDataParallel: stream-K after data-parallel tiles */
  int streamk_ring;         /* Cfg::kStreamKRing: a stream-K tile's last partial through the ring */
  int scale_chunk;          /* Cfg::kScaleChunk: k-blocks whose scale rows one copy brings */
  int resident_clusters;    /* clusters of the kernel's size the device holds at once (0: unknown) */
  int resident_pairs;       /* clusters of two (the K pair; 0: unknown or no K pair) */
  int resident_ctas_per_sm; /* the kernel's CTAs one SM holds at once */
};

typedef struct w4a16_plan {
  int split_k;            /* K slices (>= 1); > 1: fp32 partials in the workspace and the reduction */
  /* the sm90 family (0 elsewhere) */
  int stream_k;           /* 0 tile by tile; else stream-K with stream_k - 1 data-parallel tiles a
                             cluster first (runtime/cuda/sm90/sm90_config.cuh, Params::streamk) */
  int sk_base, sk_rem;    /* stream-K's parts (Params::sk_base, sk_rem: the skew in sk_rem >> 16) */
  int kpair;              /* 0, or the K pair with kpair - 1 k-blocks of lead (Params::kpair) */
  int grid;               /* CTAs launched */
  int cluster;            /* CTAs a cluster (the K pair: 2) */
  int pdl;                /* programmatic dependent launch */
  int prefetch;           /* Params::prefetch: stages whose weights load before griddepcontrol.wait */
  int act_3d;             /* a stage's activations by one copy of a 3-D map where it encodes */
  int tail_rows;          /* Params::tail_rows: rows of the last token tile's boxes */
  int scale_map;          /* 0: a bulk copy a scale row; else 1 | chunked << 1 | box rows << 8
                             (Params::scale_map; a bulk copy a row where the map does not encode and
                             no N or K tail needs it) */
  size_t workspace_bytes; /* the workspace the rules reserve for this kernel and problem */
  size_t gather_offset;   /* act-order: the offset of the gathered A ([M][K]) in the workspace, after
                             the kernel's part (256-aligned); workspace_bytes includes it */
} w4a16_plan;

#endif

// gemm_sm90.cuh - the Hopper family (sm_90a): TMA + wgmma, warp-specialized W4A16 GEMM.
//
//   D[M,N] = alpha * A[M,K] . dequant(W)[N,K]^T (+ bias[N])
//
// Orientation (generator/model.py): the weights are wgmma's register operand A, so a CTA tile is TN
// rows of N (wgmma M, 64 per instruction) x TM tokens (wgmma N, 8..256) x TK of K. Activations are
// wgmma's B operand: [TM tokens x 64 k] boxes reach shared memory by TMA with a 128-byte swizzle
// (K-major, exactly the layout wgmma reads).
//
// The parts, one header each:
//   sm90_config.cuh    Cfg (shared-memory layout, registers, the schedule features an instance
//                      carries), Params (the kernel's run-time parameters), DtypeOps
//   sm90_schedule.cuh  the persistent grid's walk over work units (tile by tile, split-K slices,
//                      stream-K parts, the K pair)
//   sm90_producer.cuh  warpgroup 0: the producer thread (every copy) and the flag warp (stream-K)
//   sm90_mainloop.cuh  the consumers' dequantization and wgmmas, k-block by k-block
//   sm90_epilogue.cuh  K-pair handoff, split-K partials, stream-K publish and fixup, the output tile
//   sm90_kernel.cuh    the __global__ function: set-up and the warpgroups' roles
//   sm90_launch.cuh    host: tensor maps, Params from the runtime's plan, the launch
//   sm90_ptx.cuh, sm90_wgmma.cuh   inline-PTX wrappers
//
// Warp specialization (384 threads): warpgroup 0 is the producer (one thread issues all copies;
// setmaxnreg.dec to Cfg::producer_regs; another warp handles stream-K's flags), warpgroups 1 and 2
// are consumers (setmaxnreg.inc to Cfg::consumer_regs; the register-light tiles run two CTAs per SM,
// Cfg::kCtasPerSm; the cooperative schedule may run four consumer warpgroups, Cfg::NC = 4, 640 threads,
// generator name suffix "_wg4"). The consumers read their packed weight fragments from shared memory
// (one 16-byte load per lane per 16x64 block, docs/LAYOUT.md), convert int4 -> fp16/bf16
// (common/dequant.cuh), apply the group scale (and zero) in registers and issue wgmma with A from
// registers; small token tiles with scale-only groups of at least TK scale fp32 partials per k-block
// instead (Cfg::kPostScaled).
//
// Pipeline: STAGES shared-memory stages, each holding the activation tile (KT boxes of [TM rows x 64
// k]; a full token tile's KT boxes by one copy of a 3-D map, Params::act_3d, since the copies' issue
// bounds the small token tiles), the packed weight tile (the packed buffer seen as a 2-D array of
// 32-bit words, [N/16 row blocks] x [K/64 * 128 words]; tile_k 256, whose box row exceeds a box
// dimension's 256 elements: 3-D, the same bytes in shared memory) and the tile's scale (zero) rows
// (one copy of a 2-D map, Params::scale_map, or a bulk copy a row). One "full" mbarrier per stage
// (the producer's arrive.expect_tx + the copies' complete_tx) and one "empty" mbarrier per stage (an
// arrival from every local consumer thread that read it, and one per consumer warp of every other CTA
// of the cluster, whose producers multicast into this CTA's stage).
//
// Schedules: cooperative - every consumer warpgroup works on every tile, each on TN/NC rows;
// pingpong - the consumer warpgroups take alternate tiles (each all TN rows), so one's epilogue
// overlaps the other's mainloop; their mainloops take turns (two "order" mbarriers), so that no wait
// on a stage's parity can run a phase ahead of the barrier.
//
// Clusters CN x CM (CTAs along N share the activation tile, CTAs along M the weight tile): each CTA
// loads 1/CN of the activation box and 1/CM of the weight box and multicasts it to the CTAs that share
// it. A consumer warp frees a stage in the other CTAs by a remote arrival of CTA-scope release
// semantics (sm90_ptx.cuh mbar_arrive_cluster: .release.cluster costs a MEMBAR.ALL.GPU per stage and
// warp, which made the cluster kernels 1.3-2x slower).
//
// Persistent grid: at most the clusters the device holds at once walk the units (cluster tile x K
// range) in a banded raster (bands of 8 cluster rows along M, N fastest inside a band), the same
// sequence for the producer and the consumers. What the grid runs is the runtime's plan
// (runtime/plan.c): the launch makes no choice of its own.
//
// Split-K (Params::split_k > 1, any value <= K/TK: slices of floor/ceil(K/TK/split) k-blocks): each
// K slice writes fp32 partials (common/splitk.cuh) and the launch enqueues the deterministic
// reduction as a programmatic dependent.
//
// Stream-K (Params::streamk): the grid's G clusters share the I = tiles x k-blocks iterations of the
// problem, tile-major, in G consecutive parts of about I / G (sk_start). A tile cut between clusters is
// begun (k-block 0) by the last unit of one cluster and finished by the first units of the next ones:
// those write their fp32 accumulators to their CTA's slot of the workspace (fragment order) and raise
// their CTA's flag (the launch's token, release); the cluster that began the tile waits for those
// flags (acquire), adds the slots in cluster order (K order; with Cfg::kStreamKRing the last
// cluster's slot comes into the stage ring by bulk copies and is added as the epilogue stages the
// tile: a fixed order either way, the same bits on every run), clears the flags (a graph replay reuses
// the token) and runs the epilogue. Only a cluster's last unit waits, and only for first units, which
// never wait: no chain of waits. Where the tiles fill more than a wave, the parts cover only the last
// part-wave's tiles and each cluster first runs as many of the others tile by tile (data-parallel +
// stream-K; Params::streamk - 1 tiles a cluster). The grid is resident as a whole; even with fewer
// CTAs resident, as long as they start in index order a waiting cluster waits only for later
// clusters' first units. After Osama et al., "Stream-K: Work-centric Parallel Decomposition for
// Dense Matrix-Matrix Multiplication on the GPU" (PPoPP 2023). The flags are the flag warp's
// (sm90_producer.cuh), so that the consumers neither wait for a release's memory barrier nor poll.
//
// K pair (Params::kpair, where two CTAs a tile fill 70-100 % of the SMs): the grid is launched in
// clusters of two, CTA 2 t + r takes tile t's first kpair_rank0_kblocks k-blocks (rank 0) or the rest
// (rank 1). Rank 0's producer announces, once its last use is released, the stage that its remaining
// k-blocks no longer need; rank 1 writes its fp32 accumulators there by st.async (distributed shared
// memory, counted on an mbarrier of rank 0), rank 0 adds them after its own and runs the epilogue. No
// workspace, no flags, no global round trip (stream-K's fixup costs 9-24 % of these problems' time,
// H100). Tiles whose accumulators exceed a stage hand them over in two halves (Cfg::kPairHalves).
//
// Programmatic dependent launch: the GEMM and the reduction are launched with programmatic stream
// serialization and let their dependents launch at once. The GEMM's producer issues the weight/scale
// copies of its first stages before griddepcontrol.wait (w4a16.h "Ordering" allows reading W,
// scales, zeros early), the activations after it; nothing else touches global memory before the wait
// (how many stages: Params::prefetch).
//
// Epilogue: alpha, bias, conversion in registers; the tile goes through shared memory and leaves by
// TMA tensor stores (TM >= 64: staged by transposed stmatrix of packed pairs, one thread issues the
// stores and the warpgroups go on with the next tile) or by 16-byte row-contiguous stores; rows >= M
// are never stored (the tensor store drops rows outside the tensor). The last token tile of a problem
// whose M is not a multiple of TM loads and stores through tensor maps of its own (tm_a_tail,
// tm_d_tail) whose boxes hold only its rows, rounded up to 8 (Params::tail_rows): TMA rows outside
// the tensor cost as much as real ones.
//
// N and K tails (the 1x1x1 clusters: N % 16 == 0 and K % 64 == 0 suffice): the last row tile may reach
// beyond N and the last k-block beyond K. The weight, activation and scale (zero) maps have exact
// extents, so TMA loads zeros there (the scale rows then always by the map): those weights are 0 x
// code (+ 0) and those activations 0, and they add nothing. The tensor stores drop the columns beyond
// N; the 16-byte row stores, the split-K partials and the bias reads are predicated on n < N.
#ifndef W4A16_SM90_GEMM_SM90_CUH
#define W4A16_SM90_GEMM_SM90_CUH

#include <cuda_runtime.h>

#include "kernel_abi.h"
#include "sm90/sm90_config.cuh"
#include "sm90/sm90_launch.cuh"

// Entry points used by templates/sm90_kernel.cu.j2.
template <typename T, int MODE, int TN, int TM, int TK, int CN, int CM, int SCHED, int STAGES, int NC>
static inline int w4a16_sm90_launch(const struct w4a16_launch_params *p, cudaStream_t stream) {
  return w4a16_sm90::launch<T, w4a16_sm90::Cfg<MODE, TN, TM, TK, CN, CM, SCHED, STAGES, NC>>(p, stream);
}

template <typename T, int MODE, int TN, int TM, int TK, int CN, int CM, int SCHED, int STAGES, int NC>
static inline int w4a16_sm90_facts(int sm_count, struct w4a16_sm90_facts *facts) {
  return w4a16_sm90::facts<T, w4a16_sm90::Cfg<MODE, TN, TM, TK, CN, CM, SCHED, STAGES, NC>>(sm_count, facts);
}

template <typename T, int MODE, int TN, int TM, int TK, int CN, int CM, int SCHED, int STAGES, int NC>
static inline int w4a16_sm90_probe(void) {
  return w4a16_sm90::probe<T, w4a16_sm90::Cfg<MODE, TN, TM, TK, CN, CM, SCHED, STAGES, NC>>();
}

#endif

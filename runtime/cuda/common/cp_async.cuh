// cp_async.cuh - per-thread asynchronous 16-byte copies global -> shared (cp.async, sm_80 and later;
// PTX ISA "cp.async"), shared by the GEMV family's activation stages and the sm90 family's stream-K
// fixup and the grouped form's row gather. Cached in L2 only (.cg).
#ifndef W4A16_COMMON_CP_ASYNC_CUH
#define W4A16_COMMON_CP_ASYNC_CUH

#include <stdint.h>

// one 16-byte copy (both addresses 16-byte aligned) into this thread's current group
static __device__ __forceinline__ void w4a16_cp_async16(uint32_t smem, const void *gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem), "l"(gmem) : "memory");
}

// ... or, where !valid, 16 zero bytes into smem (gmem is not read)
static __device__ __forceinline__ void w4a16_cp_async16_zfill(uint32_t smem, const void *gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem), "l"(gmem), "r"(valid ? 16 : 0) : "memory");
}

// an arrival on the mbarrier at shared address bar once every prior copy of this thread has
// completed, counted among the barrier's expected arrivals (.noinc: its pending count is not raised
// first)
static __device__ __forceinline__ void w4a16_cp_async_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

// closes this thread's current group of copies
static __device__ __forceinline__ void w4a16_cp_async_commit(void) {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// waits until every copy of this thread has completed
static __device__ __forceinline__ void w4a16_cp_async_wait_all(void) { asm volatile("cp.async.wait_all;" ::: "memory"); }

// waits until at most N of this thread's committed groups are pending (their data then visible to it)
template <int N>
static __device__ __forceinline__ void w4a16_cp_async_wait(void) {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

#endif

// func_attr.cuh - a kernel's function attributes (maximum dynamic shared memory, shared-memory
// carveout) set once per CUDA context instead of on every launch (host side, all families).
//
// cudaFuncSetAttribute costs the host about 0.22 us a call (H100, CUDA 13), against about 2.5 us for
// the launch itself; a launch that makes one or two such calls every time spends 6-12 % of an eager
// call of w4a16_gemm on them, where decode-sized launches are as short as the host's side (4096x4096
// M = 1: 3.8-4.0 us of host time a call against 4.0-4.5 us of GPU time).
//
// Where the attributes live is not documented: the driver keeps them per context (cuFuncSetAttribute
// on a context's copy of the kernel), and a context without them has the defaults (48 KB of dynamic
// shared memory; a launch asking for more fails). CUDA 13's runtime does apply attributes set earlier
// to a new context that loads the kernel (after cudaDeviceReset the new primary context has them),
// but nothing promises it. So the record is the ID of the context where they were set (cuCtxGetId:
// unique for the life of the process, never reused), and a launch from any other context - another
// device's, or the one after a reset - sets them again.
// Thread-safe: a context ID is stored only after its attributes are set, and a thread that reads
// another context's ID sets its own again (threads of several devices alternating on one kernel only
// make the calls more often).
#ifndef W4A16_COMMON_FUNC_ATTR_CUH
#define W4A16_COMMON_FUNC_ATTR_CUH

#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>

#include "common/driver_fn.cuh"

namespace w4a16_func_attr {

typedef CUresult (*CtxGetCurrentFn)(CUcontext *);
typedef CUresult (*CtxGetIdFn)(CUcontext, unsigned long long *);

// The ID of the calling thread's current context; 0 where there is none yet (a thread's first
// runtime call binds one) or the driver lacks cuCtxGetId (before CUDA 12.0): then nothing is recorded.
static inline unsigned long long current_context_id() {
  static const CtxGetCurrentFn get_current = (CtxGetCurrentFn)w4a16_driver::driver_fn("cuCtxGetCurrent");
  static const CtxGetIdFn get_id = (CtxGetIdFn)w4a16_driver::driver_fn("cuCtxGetId");
  if (!get_current || !get_id) return 0;
  CUcontext ctx = nullptr;
  unsigned long long id = 0;
  if (get_current(&ctx) != CUDA_SUCCESS || !ctx || get_id(ctx, &id) != CUDA_SUCCESS) return 0;
  return id;
}

// Sets KERNEL's maximum dynamic shared memory to smem_bytes (where > 0) and its preferred carveout
// to carveout percent (where >= 0, e.g. cudaSharedmemCarveoutMaxShared) unless this context already
// has them: `done` (one per kernel and pair of values, zero-initialized, static) records the context
// where they were set. Returns the first failing call's error (nothing recorded then).
template <class K>
static inline cudaError_t set_once(K kernel, std::atomic<unsigned long long> &done, int smem_bytes, int carveout) {
  const unsigned long long ctx = current_context_id();
  if (ctx != 0 && done.load(std::memory_order_acquire) == ctx) return cudaSuccess;
  if (smem_bytes > 0) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    if (e != cudaSuccess) return e;
  }
  if (carveout >= 0) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout);
    if (e != cudaSuccess) return e;
  }
  if (ctx != 0) done.store(ctx, std::memory_order_release);
  return cudaSuccess;
}

}  // namespace w4a16_func_attr

#endif

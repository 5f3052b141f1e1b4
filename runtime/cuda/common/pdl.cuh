// pdl.cuh - programmatic dependent launch (PDL) helpers shared by the families that launch with
// programmatic stream serialization (sm90, GEMV), and the split-K reduction as such a dependent.
//
// griddepcontrol.wait waits until the grids this one depends on have completed and their writes are
// visible (a no-op without a programmatic dependency); griddepcontrol.launch_dependents lets the
// dependent grid launch (it still waits for this grid's completion before its own wait). Both are PTX
// ISA 7.8, sm_90: no-ops in code compiled for older architectures, whose launches never carry the
// programmatic attribute.
#ifndef W4A16_COMMON_PDL_CUH
#define W4A16_COMMON_PDL_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>

#include "common/splitk.cuh"

static __device__ __forceinline__ void w4a16_griddep_wait(void) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

static __device__ __forceinline__ void w4a16_griddep_launch_dependents(void) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Whether launches of kernel may carry programmatic stream serialization: the image the current
// device runs must hold griddepcontrol.wait, i.e. be compiled for compute >= 90 (an sm_80 image, or
// compute_80 PTX compiled at load for a later GPU, has none, and a launch with the attribute could
// then read its inputs while the previous kernel still writes them).
template <class K>
static inline bool w4a16_kernel_image_waits(K kernel) {
  cudaFuncAttributes attr;
  const bool ok = cudaFuncGetAttributes(&attr, reinterpret_cast<const void *>(kernel)) == cudaSuccess &&
                  attr.ptxVersion >= 90 && attr.binaryVersion >= 90;
  (void)cudaGetLastError();
  return ok;
}

// w4a16_kernel_image_waits, asked once per device ordinal (< 64; others ask every time) and kept in
// cache (one per kernel: 0 not asked, 1 no, 2 yes).
template <class K>
static inline bool w4a16_kernel_image_waits_cached(K kernel, std::atomic<int> (&cache)[64]) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) {
    (void)cudaGetLastError();
    return w4a16_kernel_image_waits(kernel);
  }
  int state = cache[dev].load(std::memory_order_relaxed);
  if (state == 0) {
    state = w4a16_kernel_image_waits(kernel) ? 2 : 1;
    cache[dev].store(state, std::memory_order_relaxed);
  }
  return state == 2;
}

// Enqueues a grid-stride copy kernel over `items` work items (one a thread) of blocks of `threads`:
// ceil(items / threads) blocks, at most 8 an SM of sm_count (the rest by the stride), with
// programmatic stream serialization where pdl_allowed is set and the device's image of the kernel
// holds the wait (image_waits: the kernel's w4a16_kernel_image_waits_cached cache); returns the
// launch's cudaError_t as int.
template <class K, class... Args>
static inline int w4a16_launch_grid_stride(K kernel, std::atomic<int> (&image_waits)[64], int64_t items,
                                           int threads, int sm_count, int pdl_allowed, void *stream,
                                           const Args &...args) {
  const bool pdl = pdl_allowed && w4a16_kernel_image_waits_cached(kernel, image_waits);
  int64_t blocks = (items + threads - 1) / threads;
  const int64_t cap = (int64_t)(sm_count > 0 ? sm_count : 132) * 8;
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)blocks, 1, 1);
  cfg.blockDim = dim3((unsigned)threads, 1, 1);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = (cudaStream_t)stream;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, args...);
  if (e == cudaSuccess) e = cudaGetLastError();
  return (int)e;
}

// The split-K reduction of common/splitk.cuh (same order z = 0, 1, ..., same bits), launched as a
// programmatic dependent of the GEMM: its launch overlaps the GEMM and it waits (griddepcontrol.wait)
// for the GEMM's partials before reading them. With `early` it lets its own dependent (the next
// layer's GEMM, say) launch before that wait, so the next kernel's CTAs can become resident and
// prefetch their weights while this runs; else right after the wait.
template <typename T>
__global__ void __launch_bounds__(256) w4a16_splitk_reduce_pdl(const float *__restrict__ ws, int split_k, int m, int n,
                                                               float alpha, const T *__restrict__ bias,
                                                               T *__restrict__ d, int64_t ldd, int early) {
  if (early) w4a16_griddep_launch_dependents();
  w4a16_griddep_wait();
  if (!early) w4a16_griddep_launch_dependents();
  w4a16_splitk_reduce_body<T>(ws, split_k, m, n, alpha, bias, d, ldd);
}

// Enqueues w4a16_splitk_reduce_pdl on stream, with programmatic stream serialization where pdl is set.
template <typename T>
static inline cudaError_t w4a16_splitk_reduce_pdl_launch(const float *ws, int split_k, int m, int n, float alpha,
                                                         const T *bias, T *d, int64_t ldd, int sm_count, int early,
                                                         int pdl, cudaStream_t stream) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t rc = {};
  rc.gridDim = w4a16_splitk_reduce_grid(m, n, sm_count);
  rc.blockDim = dim3(256, 1, 1);
  rc.dynamicSmemBytes = 0;
  rc.stream = stream;
  rc.attrs = attr;
  rc.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&rc, w4a16_splitk_reduce_pdl<T>, ws, split_k, m, n, alpha, bias, d, ldd, early);
}

#endif

// driver_fn.cuh - driver API entry points through the CUDA runtime, so that the library needs no link
// against libcuda (host side; used by common/func_attr.cuh for the context ID and by
// sm90/sm90_ptx.cuh for the tensor-map encoder).
#ifndef W4A16_COMMON_DRIVER_FN_CUH
#define W4A16_COMMON_DRIVER_FN_CUH

#include <cuda_runtime.h>

namespace w4a16_driver {

// The driver's entry point NAME as of the CUDA 12.0 API (cudaGetDriverEntryPointByVersion), or NULL
// where the driver has none; a failed query leaves no error behind for cudaGetLastError. Callers keep
// the result in a function-local static (a query costs the host microseconds). Thread-safe.
static inline void *driver_fn(const char *name) {
  void *f = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return f;
}

}  // namespace w4a16_driver

#endif

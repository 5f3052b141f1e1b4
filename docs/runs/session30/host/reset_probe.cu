// reset_probe.cu - thirtieth session: does a kernel's function attribute set before cudaDeviceReset
// hold in the new primary context? A kernel of 100 KB of dynamic shared memory (over the default
// 48 KB limit): its attributes and a launch before the reset (after cudaFuncSetAttribute), then after
// the reset without setting them again; the context IDs (cuCtxGetId) before and after.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>

__global__ void big(int *p) {
  extern __shared__ int s[];
  s[threadIdx.x] = (int)threadIdx.x;
  __syncthreads();
  if (p) p[threadIdx.x] = s[255 - threadIdx.x];
}

static unsigned long long ctx_id(void) {
  void *f1 = nullptr, *f2 = nullptr;
  cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &f1, 12000, cudaEnableDefault, &q);
  cudaGetDriverEntryPointByVersion("cuCtxGetId", &f2, 12000, cudaEnableDefault, &q);
  CUcontext c = nullptr;
  unsigned long long id = 0;
  if (((CUresult(*)(CUcontext *))f1)(&c) != CUDA_SUCCESS || !c) return 0;
  if (((CUresult(*)(CUcontext, unsigned long long *))f2)(c, &id) != CUDA_SUCCESS) return 0;
  return id;
}

static void show(const char *when) {
  cudaFuncAttributes fa;
  cudaError_t e = cudaFuncGetAttributes(&fa, big);
  printf("%-40s ctx %llu: maxDynamicSharedSizeBytes %d, preferredShmemCarveout %d (%s)\n", when, ctx_id(),
         e == cudaSuccess ? fa.maxDynamicSharedSizeBytes : -1, e == cudaSuccess ? fa.preferredShmemCarveout : -1,
         cudaGetErrorString(e));
}

static void launch(const char *when) {
  int *p = nullptr;
  cudaMalloc(&p, 1024);
  big<<<1, 256, 100 * 1024>>>(p);
  cudaError_t e = cudaGetLastError();
  cudaError_t s = cudaDeviceSynchronize();
  printf("%-40s launch of 100 KB: %s / %s\n", when, cudaGetErrorString(e), cudaGetErrorString(s));
  cudaFree(p);
}

int main() {
  cudaFree(0);
  show("fresh");
  launch("fresh, attribute not set");
  cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024);
  cudaFuncSetAttribute(big, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  show("after cudaFuncSetAttribute");
  launch("after cudaFuncSetAttribute");
  cudaDeviceReset();
  printf("cudaDeviceReset: ctx now %llu\n", ctx_id());
  cudaFree(0);
  show("after reset");
  launch("after reset, not set again");
  return 0;
}

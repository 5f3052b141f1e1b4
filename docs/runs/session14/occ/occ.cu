// cluster occupancy of dummy kernels shaped like the sm90 tiles (threads, registers, shared memory)
#include <cstdio>
#include <cuda_runtime.h>
template <int MINB> __global__ void __launch_bounds__(384, MINB) k(int *x) {
  extern __shared__ int s[];
  if (x) x[threadIdx.x] = s[threadIdx.x];
}
template <int MINB> void q(const char *name, int smem) {
  auto f = k<MINB>;
  cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(f, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  int per = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, f, 384, smem);
  printf("%s smem %d: %d per SM; clusters of", name, smem, per);
  for (int cs = 1; cs <= 8; ++cs) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeClusterDimension;
    a[0].val.clusterDim.x = cs; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(cs * 64); cfg.blockDim = dim3(384); cfg.dynamicSmemBytes = smem; cfg.attrs = a; cfg.numAttrs = 1;
    int n = -1;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&n, f, &cfg);
    printf(" %d:%d%s", cs, n, e ? "(err)" : "");
  }
  printf("\n");
}
int main() {
  q<2>("128x16x128 (2/SM)", 112016);
  q<1>("128x16x256 (1/SM)", 218512);
  q<1>("256x16x128 (1/SM)", 189840);
  return 0;
}

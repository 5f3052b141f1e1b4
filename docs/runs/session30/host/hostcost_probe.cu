// hostcost_probe.cu - thirtieth session: what an eager w4a16_gemm call costs the host, against the GPU
// time of the launch, and what the two cudaFuncSetAttribute calls each TMA GEMV launch makes cost
// (review note of the twenty-ninth session). 4096x4096 fp16 scale-only g128, M given (default 1).
// For each named kernel (and NULL: the runtime's selection): host wall time per call over 2000 eager
// calls (stream async; the queue is drained every 200 calls, outside the timed span), and the GPU time
// per launch of the same eager stream (events around 200 calls). Then the bare CUDA costs on a dummy
// kernel: cudaFuncSetAttribute (max dynamic shared memory, carveout), cudaFuncGetAttributes,
// cuCtxGetCurrent + cuCtxGetId (the once-per-context record), cuTensorMapEncodeTiled, and
// cudaLaunchKernelEx with the PDL attribute of a kernel taking a pointer and of one taking seven
// tensor maps and 256 bytes more (the sm90 family's parameters).
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "w4a16/w4a16.h"

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

__global__ void dummy(int *p) {
  if (p && threadIdx.x == 0 && blockIdx.x == 0) *p = 1;
}

struct big_params {
  unsigned char b[256];
};
__global__ void dummy_maps(const __grid_constant__ CUtensorMap m0, const __grid_constant__ CUtensorMap m1,
                           const __grid_constant__ CUtensorMap m2, const __grid_constant__ CUtensorMap m3,
                           const __grid_constant__ CUtensorMap m4, const __grid_constant__ CUtensorMap m5,
                           const __grid_constant__ CUtensorMap m6, const big_params prm) {
  if (prm.b[threadIdx.x & 255] == 7 && blockIdx.x == 1000000) asm volatile("trap;");
}

__global__ void fill(uint32_t *p, size_t words, uint32_t seed, uint32_t mask, uint32_t or_) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t x = (uint32_t)i * 2654435761u ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    p[i] = (x & mask) | or_;
  }
}

int main(int argc, char **argv) {
  const int m = argc > 1 ? atoi(argv[1]) : 1;
  const int N = 4096, K = 4096;
  const size_t wb = (size_t)N * K / 2, sb = (size_t)N * (K / 128) * 2;
  void *w, *s, *a, *d, *ws;
  CK(cudaMalloc(&w, wb));
  CK(cudaMalloc(&s, sb));
  CK(cudaMalloc(&a, (size_t)16 * K * 2));
  CK(cudaMalloc(&d, (size_t)16 * N * 2));
  const size_t ws_bytes = 64u << 20;
  CK(cudaMalloc(&ws, ws_bytes));
  fill<<<264, 256>>>((uint32_t *)w, wb / 4, 1234u, 0xffffffffu, 0u);
  fill<<<264, 256>>>((uint32_t *)s, sb / 4, 77u, 0x03ff03ffu, 0x20002000u);
  fill<<<64, 256>>>((uint32_t *)a, (size_t)16 * K / 2, 99u, 0x03ff03ffu, 0x34003400u);
  CK(cudaDeviceSynchronize());
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  w4a16_gemm_args ga;
  memset(&ga, 0, sizeof ga);
  ga.problem.m = m;
  ga.problem.n = N;
  ga.problem.k = K;
  ga.problem.group_size = 128;
  ga.problem.mode = W4A16_FINEGRAINED_SCALE_ONLY;
  ga.problem.dtype = W4A16_DTYPE_F16;
  ga.a = a;
  ga.w = w;
  ga.scales = s;
  ga.d = d;
  ga.alpha = 1.f;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const char *names[] = {NULL,
                         "w4a16_gemv_f16_u4_fgs_n32_m4_k1024_s4_tma",
                         "w4a16_gemv_f16_u4_fgs_n16_m8_k1024_s4_sk8",
                         "w4a16_sm80_f16_u4_fgs_128x16x128_s3",
                         "w4a16_sm90_f16_u4_fgs_128x16x256_1x1x1_cooperative"};
  printf("M = %d, 4096x4096 fp16 fgs g128\n%-56s %12s %12s\n", m, "kernel", "host us/call", "GPU us/call");
  for (const char *nm : names) {
    const w4a16_kernel_desc *k = nm ? w4a16_kernel_find(nm) : NULL;
    if (nm && !k) {
      printf("%-56s not built\n", nm);
      continue;
    }
    if (w4a16_gemm(&ga, k, ws, ws_bytes, st) != W4A16_STATUS_OK) {
      printf("%-56s %s\n", nm ? nm : "(selected)", w4a16_last_error_message());
      continue;
    }
    CK(cudaStreamSynchronize(st));
    std::vector<double> host;
    std::vector<float> gpu;
    for (int r = 0; r < 10; ++r) {
      CK(cudaEventRecord(e0, st));
      const double t0 = now_us();
      for (int i = 0; i < 200; ++i) w4a16_gemm(&ga, k, ws, ws_bytes, st);
      const double t1 = now_us();
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      host.push_back((t1 - t0) / 200);
      gpu.push_back(ms * 1000.f / 200);
    }
    std::sort(host.begin(), host.end());
    std::sort(gpu.begin(), gpu.end());
    printf("%-56s %12.3f %12.3f\n", nm ? nm : "(selected)", host[5], gpu[5]);
  }
  // bare CUDA costs, per call, median of 10 x 2000
  auto bench = [&](const char *what, auto fn) {
    std::vector<double> t;
    for (int r = 0; r < 10; ++r) {
      const double t0 = now_us();
      for (int i = 0; i < 2000; ++i) fn();
      t.push_back((now_us() - t0) / 2000);
    }
    std::sort(t.begin(), t.end());
    printf("%-56s %12.3f\n", what, t[5]);
  };
  CK(cudaStreamSynchronize(st));
  bench("cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", [&] {
    CK(cudaFuncSetAttribute(dummy, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000));
  });
  bench("cudaFuncSetAttribute(PreferredSharedMemoryCarveout)", [&] {
    CK(cudaFuncSetAttribute(dummy, cudaFuncAttributePreferredSharedMemoryCarveout,
                            (int)cudaSharedmemCarveoutMaxShared));
  });
  bench("cudaFuncGetAttributes", [&] {
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, dummy));
  });
  bench("cudaGetDevice", [&] {
    int dev;
    CK(cudaGetDevice(&dev));
  });
  {
    void *f1 = nullptr, *f2 = nullptr, *f3 = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &f1, 12000, cudaEnableDefault, &q));
    CK(cudaGetDriverEntryPointByVersion("cuCtxGetId", &f2, 12000, cudaEnableDefault, &q));
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f3, 12000, cudaEnableDefault, &q));
    auto get_current = (CUresult(*)(CUcontext *))f1;
    auto get_id = (CUresult(*)(CUcontext, unsigned long long *))f2;
    auto encode = (CUresult(*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                               const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                               CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill))f3;
    unsigned long long id0 = 0;
    bench("cuCtxGetCurrent + cuCtxGetId", [&] {
      CUcontext c;
      unsigned long long id;
      if (get_current(&c) != CUDA_SUCCESS || get_id(c, &id) != CUDA_SUCCESS) exit(2);
      id0 = id;
    });
    printf("  (context id %llu)\n", id0);
    CUtensorMap tm;
    bench("cuTensorMapEncodeTiled (3-D, 128-byte swizzle)", [&] {
      const cuuint64_t dims[3] = {64, 16, 64};
      const cuuint64_t strides[2] = {8192, 128};
      const cuuint32_t box[3] = {64, 16, 8}, estr[3] = {1, 1, 1};
      if (encode(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, a, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                 CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        exit(3);
    });
    big_params bp;
    memset(&bp, 0, sizeof bp);
    std::vector<double> tb;
    for (int r = 0; r < 10; ++r) {
      const double t0 = now_us();
      for (int i = 0; i < 200; ++i) {
        cudaLaunchConfig_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDim = dim3(128);
        cfg.blockDim = dim3(256);
        cfg.stream = st;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = at;
        cfg.numAttrs = 1;
        CK(cudaLaunchKernelEx(&cfg, dummy_maps, tm, tm, tm, tm, tm, tm, tm, bp));
      }
      tb.push_back((now_us() - t0) / 200);
      CK(cudaStreamSynchronize(st));
    }
    std::sort(tb.begin(), tb.end());
    printf("%-56s %12.3f\n", "cudaLaunchKernelEx (7 tensor maps + 256 B, PDL)", tb[5]);
  }
  int *flag;
  CK(cudaMalloc(&flag, 4));
  std::vector<double> t;
  for (int r = 0; r < 10; ++r) {
    const double t0 = now_us();
    for (int i = 0; i < 200; ++i) {
      cudaLaunchConfig_t cfg;
      memset(&cfg, 0, sizeof cfg);
      cfg.gridDim = dim3(128);
      cfg.blockDim = dim3(256);
      cfg.stream = st;
      cudaLaunchAttribute at[1];
      at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      at[0].val.programmaticStreamSerializationAllowed = 1;
      cfg.attrs = at;
      cfg.numAttrs = 1;
      CK(cudaLaunchKernelEx(&cfg, dummy, flag));
    }
    t.push_back((now_us() - t0) / 200);
    CK(cudaStreamSynchronize(st));
  }
  std::sort(t.begin(), t.end());
  printf("%-56s %12.3f\n", "cudaLaunchKernelEx (dummy, PDL attribute)", t[5]);
  return 0;
}

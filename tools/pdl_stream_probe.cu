// pdl_stream_probe.cu - how close can back-to-back weight-streaming kernels get to the HBM
// read bandwidth on sm_90? A diagnostic for the decode path (issue 4), not part of the library.
//
// Each kernel streams B bytes (one "layer" of packed weights) and reduces them to one word per
// CTA (XOR, so nothing is optimized away). Variants:
//   grid    CTAs = SMs x ctas_per_sm, each a contiguous, equal share of the bytes
//   stages  a ring of `stages` 16 KB shared-memory stages filled by cp.async.bulk (TMA 1-D)
//   pre     stages filled before griddepcontrol.wait (the prefetch that may overlap the
//           previous kernel); 0 = nothing before the wait
//   pdl     programmatic stream serialization on the launch (0 = plain stream order)
//   tf      launch_dependents before griddepcontrol.wait (1) or right after it (0)
// Timing (docs/DESIGN.md, "Measuring"): a CUDA graph of L launches over copies rotating out of L2,
// 3 warm-up replays, 15 timed replays (events), median per launch.
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o pdl_stream_probe pdl_stream_probe.cu
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#define CK(x)                                                                                    \
  do {                                                                                           \
    cudaError_t e_ = (x);                                                                        \
    if (e_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));         \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

static constexpr int kStage = 16384;

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar,
                                          uint64_t pol) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
          dst),
      "l"(src), "r"(bytes), "r"(bar), "l"(pol)
      : "memory");
}

__global__ void __launch_bounds__(256) stream_kernel(const uint8_t *w, size_t bytes, int stages, int pre,
                                                     int trig_first, uint32_t *out) {
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  const uint32_t bars = base + stages * kStage;
  const size_t per = (bytes / gridDim.x) & ~(size_t)15;
  const uint8_t *src = w + per * blockIdx.x;
  const int nst = (int)((per + kStage - 1) / kStage);
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  auto issue = [&](int i) {
    const int s = i % stages;
    const size_t off = (size_t)i * kStage;
    const uint32_t n = (uint32_t)(per - off < (size_t)kStage ? per - off : kStage);
    mbar_expect(bars + 8 * s, n);
    bulk_load(base + s * kStage, src + off, n, bars + 8 * s, pol);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) mbar_init(bars + 8 * s, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int i = 0; i < pre && i < nst; ++i) issue(i);
  }
  __syncthreads();
  if (trig_first) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (!trig_first) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (threadIdx.x == 0)
    for (int i = pre; i < stages && i < nst; ++i) issue(i);
  uint32_t x = 0;
  for (int i = 0; i < nst; ++i) {
    const int s = i % stages;
    mbar_wait(bars + 8 * s, (uint32_t)(i / stages) & 1u);
    const size_t off = (size_t)i * kStage;
    const int n = (int)(per - off < (size_t)kStage ? per - off : kStage);
    for (int b = threadIdx.x * 16; b < n; b += 256 * 16) {
      uint4 v;
      asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "r"(base + s * kStage + b));
      x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    __syncthreads();
    if (threadIdx.x == 0 && i + stages < nst) issue(i + stages);
  }
  x = __reduce_xor_sync(0xffffffffu, x);
  if ((threadIdx.x & 31) == 0) atomicXor(out + blockIdx.x, x);
}

static float run_case(size_t bytes, int copies, std::vector<uint8_t *> &bufs, uint32_t *out, int sms, int per_sm,
                      int stages, int pre, int pdl, int trig_first, int launches) {
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const int smem = stages * kStage + 8 * stages;
  CK(cudaFuncSetAttribute(stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(sms * per_sm);
  cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st;
  cfg.attrs = &attr;
  cfg.numAttrs = pdl ? 1 : 0;
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int l = 0; l < launches; ++l)
    CK(cudaLaunchKernelEx(&cfg, stream_kernel, (const uint8_t *)bufs[l % copies], bytes, stages, pre, trig_first, out));
  CK(cudaStreamEndCapture(st, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(ge, st));
  std::vector<float> t;
  for (int i = 0; i < 15; ++i) {
    CK(cudaEventRecord(e0, st));
    CK(cudaGraphLaunch(ge, st));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000.f / launches);
  }
  std::sort(t.begin(), t.end());
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaStreamDestroy(st));
  return t[t.size() / 2];
}

int main() {
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t layers[][2] = {{4096, 4096}, {6144, 4096}, {4096, 14336}, {28672, 4096},
                              {8192, 8192}, {10240, 8192}, {8192, 28672}, {57344, 8192}};
  uint32_t *out;
  CK(cudaMalloc(&out, 4096 * sizeof(uint32_t)));
  struct V {
    int per_sm, stages, pre, pdl, tf;
  } vars[] = {{1, 6, 0, 0, 0}, {2, 6, 6, 1, 0}, {2, 6, 6, 1, 1}, {2, 3, 3, 1, 1}, {2, 4, 4, 1, 1},
              {3, 4, 4, 1, 1}, {4, 3, 3, 1, 1}, {1, 6, 6, 1, 1}, {1, 12, 12, 1, 1}, {2, 2, 2, 1, 1}};
  printf("bytes_MB");
  for (const V &v : vars) printf(",c%d_s%d_p%d_pdl%d_tf%d", v.per_sm, v.stages, v.pre, v.pdl, v.tf);
  printf("\n");
  for (auto &ly : layers) {
    const size_t bytes = ly[0] * ly[1] / 2 + ly[0] * ly[1] / 128 * 2;  // packed + group-128 scales
    const int copies = (int)std::max<size_t>(2, (size_t)(300e6 / bytes) + 1);
    std::vector<uint8_t *> bufs(copies);
    for (auto &b : bufs) {
      CK(cudaMalloc(&b, bytes));
      CK(cudaMemset(b, 0x5a, bytes));
    }
    const int launches = std::max(copies, 40);
    printf("%zux%zu %.1f", ly[0], ly[1], bytes / 1e6);
    for (const V &v : vars) {
      const float us = run_case(bytes, copies, bufs, out, sms, v.per_sm, v.stages, v.pre, v.pdl, v.tf, launches);
      printf(",%.2fus(%.2f)", us, bytes / 3.1e12 / (us * 1e-6));
    }
    printf("\n");
    fflush(stdout);
    for (auto &b : bufs) CK(cudaFree(b));
  }
  return 0;
}

// chain_probe.cu - scratch (twenty-ninth session): can a third launch's weight stream hide a decode
// GEMV's post-wait math? Back-to-back kernels under programmatic dependent launch, each CTA issuing
// its whole share of one layer's bytes (4096x4096 packed + group-128 scales by default) before
// griddepcontrol.wait, then "math" after the wait: `spin` SM clock cycles per stage once the stage
// has arrived (the real kernel's dequant + mma, which needs A, so comes after the wait). The shared
// memory a CTA asks for sets how many CTAs (of consecutive launches) an SM holds: 1, 2 or 3.
// Timing as tools/pdl_stream_probe.cu (graph of L launches over copies rotating out of L2, median).
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o chain_probe chain_probe.cu
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// stages: the CTA's share in `stages` equal pieces (all issued before the wait)
__global__ void __launch_bounds__(288) chain_kernel(const uint8_t *w, const uint8_t *a, size_t per, int stages,
                                                    int spin, int trig, uint32_t *out) {
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  const uint32_t sb = (uint32_t)((per / stages + 15) & ~(size_t)15);
  const uint32_t bars = base + stages * sb;
  const uint8_t *src = w + per * blockIdx.x;
  if (threadIdx.x == 256) {
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    for (int s = 0; s < stages; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bars + 8 * s));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int s = 0; s < stages; ++s) {
      const size_t off = (size_t)s * sb;
      const uint32_t n = (uint32_t)(per - off < sb ? per - off : sb);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bars + 8 * s), "r"(n) : "memory");
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], "
          "%4;" ::"r"(base + s * sb),
          "l"(src + off), "r"(n), "r"(bars + 8 * s), "l"(pol)
          : "memory");
    }
  }
  __syncthreads();
  if (trig) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (threadIdx.x >= 256) return;
  // A after the wait (the previous kernel's output in a real model): one 16-byte load a thread
  uint4 av = *reinterpret_cast<const uint4 *>(a + 16 * threadIdx.x);
  uint32_t x = av.x ^ av.w;
  for (int s = 0; s < stages; ++s) {
    mbar_wait(bars + 8 * s, 0u);
    const size_t off = (size_t)s * sb;
    const int n = (int)(per - off < sb ? per - off : sb);
    for (int b = threadIdx.x * 16; b < n; b += 256 * 16) {
      uint4 v;
      asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "r"(base + s * sb + b));
      x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (spin > 0) {
      const long long t0 = clock64();
      while (clock64() - t0 < spin) x += 1;
    }
  }
  x = __reduce_xor_sync(0xffffffffu, x);
  if ((threadIdx.x & 31) == 0) atomicXor(out + blockIdx.x, x);
}

int main(int argc, char **argv) {
  const size_t n = argc > 1 ? atoll(argv[1]) : 4096, k = argc > 2 ? atoll(argv[2]) : 4096;
  const int grid = argc > 3 ? atoi(argv[3]) : 128;
  const size_t bytes = n * k / 2 + n * k / 128 * 2;
  const size_t per = (bytes / grid) & ~(size_t)15;
  const int copies = (int)std::max<size_t>(2, (size_t)(300e6 / bytes) + 1);
  std::vector<uint8_t *> bufs(copies);
  for (auto &b : bufs) {
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(b, 0x5a, bytes));
  }
  uint8_t *a;
  uint32_t *out;
  CK(cudaMalloc(&a, 1 << 16));
  CK(cudaMemset(a, 1, 1 << 16));
  CK(cudaMalloc(&out, 4096 * sizeof(uint32_t)));
  const int launches = std::max(copies, 40);
  CK(cudaFuncSetAttribute(chain_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  const int stages = 4;
  const int data = (int)(stages * ((per / stages + 15) & ~(size_t)15) + 8 * stages);
  printf("layer %zux%zu, %.3f MB, grid %d, %zu bytes a CTA, floor %.3f us at 3.1 TB/s\n", n, k, bytes / 1e6, grid,
         per, bytes / 3.1e12 * 1e6);
  printf("spin_cycles_per_stage");
  const int fits[] = {3, 2, 1};
  for (int f : fits) printf(",%d_per_SM", f);
  printf(",2_per_SM_no_pdl\n");
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (int spin : {0, 250, 500, 750, 1000}) {
    printf("%d", spin);
    for (int v = 0; v < 4; ++v) {
      const int f = v < 3 ? fits[v] : 2;
      // shared memory that lets f CTAs on an SM (228 KB, 1 KB reserved per CTA)
      int smem = (228 * 1024) / f - 1024 - 64;
      if (smem > 200 * 1024) smem = 200 * 1024;
      if (smem < data) smem = data;
      cudaLaunchAttribute attr;
      attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr.val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(grid);
      cfg.blockDim = dim3(288);
      cfg.dynamicSmemBytes = smem;
      cfg.stream = st;
      cfg.attrs = &attr;
      cfg.numAttrs = v < 3 ? 1 : 0;
      int occ = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, chain_kernel, 288, smem));
      cudaGraph_t g;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
      for (int l = 0; l < launches; ++l)
        CK(cudaLaunchKernelEx(&cfg, chain_kernel, (const uint8_t *)bufs[l % copies], (const uint8_t *)a, per, stages,
                              spin, 1, out));
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
      printf(",%.3f(occ%d)", t[t.size() / 2], occ);
      CK(cudaGraphExecDestroy(ge));
      CK(cudaGraphDestroy(g));
      CK(cudaEventDestroy(e0));
      CK(cudaEventDestroy(e1));
    }
    printf("\n");
    fflush(stdout);
  }
  return 0;
}

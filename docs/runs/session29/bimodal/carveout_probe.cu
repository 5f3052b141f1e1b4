// carveout_probe.cu - scratch (twenty-ninth session): is the fp16 32x4x1024 TMA GEMV's two-state time on
// 4096x4096 M = 2 (4.1 or 4.7-5.1 us, twenty-eighth session section 4) the SM's shared-memory
// carveout that earlier launches leave behind? One process: the test (w4a16_profile of 4096x4096 M = 2,
// the times of 32x4x1024 s4 and 16x8x1024 s4) after dummy grids on every SM that ask for a given
// carveout (cudaFuncAttributePreferredSharedMemoryCarveout) and dynamic shared memory, then after
// profiling 6144x4096 at M = 1..16 (the sequence that flipped it in the twenty-eighth session).
// argv[1]: order of steps, letters: b (baseline test), L (dummy: carveout 0, no shared memory),
// S (dummy: carveout 100, 200 KB), M (dummy: carveout 50, 48 KB), P (profile 6144x4096 M = 1..16)
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "w4a16/select.h"
#include "w4a16/w4a16.h"

__global__ void dummy(int *out) {
  extern __shared__ int sm[];
  sm[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0 && sm[5] != 5) out[blockIdx.x] = 1;
}

static w4a16_problem prob(int64_t m, int64_t n, int64_t k) {
  w4a16_problem p;
  memset(&p, 0, sizeof p);
  p.m = m; p.n = n; p.k = k; p.group_size = 128;
  p.mode = W4A16_FINEGRAINED_SCALE_ONLY; p.dtype = W4A16_DTYPE_F16;
  return p;
}

static void test(const char *label) {
  w4a16_problem p = prob(2, 4096, 4096);
  w4a16_profile_result r[64];
  int n = 0;
  w4a16_status st = w4a16_profile(&p, NULL, r, 64, &n);
  double a = 0, b = 0, c = 0;
  for (int i = 0; i < n; ++i) {
    if (strstr(r[i].kernel->name, "f16_u4_fgs_n32_m4_k1024_s4_tma")) a = r[i].median_us;
    if (strstr(r[i].kernel->name, "f16_u4_fgs_n16_m8_k1024_s4_tma")) b = r[i].median_us;
    if (strstr(r[i].kernel->name, "f16_u4_fgs_n32_m8_k1024_s3_tma")) c = r[i].median_us;
  }
  printf("%-34s st %d  32x4x1024 %.3f  16x8x1024 %.3f  32x8x1024s3 %.3f  ratio %.3f\n", label, (int)st, a, b, c, a / b);
  fflush(stdout);
}

static void run_dummy(int carve, int smem) {
  int *out;
  cudaMalloc(&out, 4096 * sizeof(int));
  cudaFuncSetAttribute(dummy, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024);
  cudaFuncSetAttribute(dummy, cudaFuncAttributePreferredSharedMemoryCarveout, carve);
  for (int i = 0; i < 20; ++i) dummy<<<132 * 4, 256, smem>>>(out);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) printf("dummy: %s\n", cudaGetErrorString(e));
  cudaFree(out);
}

int main(int argc, char **argv) {
  const char *steps = argc > 1 ? argv[1] : "bLbSbMbPbLb";
  char lab[128] = "";
  for (const char *s = steps; *s; ++s) {
    size_t l = strlen(lab);
    if (*s == 'b') {
      test(lab[0] ? lab : "first");
      lab[0] = 0;
      continue;
    }
    if (*s == 'L') run_dummy(0, 1024);
    if (*s == 'S') run_dummy(100, 200 * 1024);
    if (*s == 'M') run_dummy(50, 48 * 1024);
    if (*s == 'P')
      for (int m = 1; m <= 16; ++m) {
        w4a16_problem p = prob(m, 6144, 4096);
        w4a16_profile_result r[64];
        int got = 0;
        w4a16_profile(&p, NULL, r, 64, &got);
      }
    snprintf(lab + l, sizeof lab - l, "after %c ", *s);
  }
  return 0;
}

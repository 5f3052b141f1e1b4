// place_probe.cu - scratch (twenty-ninth session): does the weights' placement set the two-state time of
// the fp16 TMA GEMV kernels on 4096x4096 (twenty-eighth session, section 4)? One process times three
// kernels at M = 1 and 2 (w4a16_gemm with the kernel named; a graph of 80 launches over 40 weight copies
// rotating out of L2, 3 warm-up replays, median of 11), then frees the weight copies and allocates
// them again behind a held allocation of another size, several times.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

__global__ void fill(uint32_t *p, size_t words, uint32_t seed, uint32_t mask, uint32_t or_) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t x = (uint32_t)i * 2654435761u ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    p[i] = (x & mask) | or_;
  }
}

static const int N = 4096, K = 4096;
static int COPIES = 40, LAUNCHES = 80, PACKED = 0;  // argv[2..4]: copies, launches per graph, 1 = one buffer
static std::vector<void *> w, s;
static void *a, *d, *one;

static void alloc_weights(uint32_t seed) {
  w.assign(COPIES, nullptr);
  s.assign(COPIES, nullptr);
  // PACKED: the profiler's layout (runtime/timing.c): one buffer, copy c = [W | scales] at c x (W + scales)
  const size_t cb = (size_t)N * K / 2 + (size_t)N * (K / 128) * 2;
  if (PACKED) CK(cudaMalloc(&one, cb * COPIES));
  for (int c = 0; c < COPIES; ++c) {
    if (PACKED) {
      w[c] = (char *)one + c * cb;
      s[c] = (char *)w[c] + (size_t)N * K / 2;
    } else {
      CK(cudaMalloc(&w[c], (size_t)N * K / 2));
      CK(cudaMalloc(&s[c], (size_t)N * (K / 128) * 2));
    }
    fill<<<264, 256>>>((uint32_t *)w[c], (size_t)N * K / 8, seed + c, 0xffffffffu, 0u);
    // fp16 scales in [2^-7, 2^-6): exponent 0x20..
    fill<<<264, 256>>>((uint32_t *)s[c], (size_t)N * (K / 128) / 2, seed * 7 + c, 0x03ff03ffu, 0x20002000u);
  }
  CK(cudaDeviceSynchronize());
}
static void free_weights() {
  if (PACKED) {
    CK(cudaFree(one));
    return;
  }
  for (int c = 0; c < COPIES; ++c) {
    CK(cudaFree(w[c]));
    CK(cudaFree(s[c]));
  }
}

static float time_kernel(const w4a16_kernel_desc *kd, int m, cudaStream_t st) {
  w4a16_gemm_args ga;
  memset(&ga, 0, sizeof ga);
  ga.problem.m = m;
  ga.problem.n = N;
  ga.problem.k = K;
  ga.problem.group_size = 128;
  ga.problem.mode = W4A16_FINEGRAINED_SCALE_ONLY;
  ga.problem.dtype = W4A16_DTYPE_F16;
  ga.a = a;
  ga.d = d;
  ga.alpha = 1.f;
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int l = 0; l < LAUNCHES; ++l) {
    ga.w = w[l % COPIES];
    ga.scales = s[l % COPIES];
    w4a16_status r = w4a16_gemm(&ga, kd, NULL, 0, st);
    if (r != W4A16_STATUS_OK) {
      fprintf(stderr, "gemm: %s %s\n", w4a16_status_name(r), w4a16_last_error_message());
      exit(1);
    }
  }
  CK(cudaStreamEndCapture(st, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(ge, st));
  std::vector<float> t;
  for (int i = 0; i < 11; ++i) {
    CK(cudaEventRecord(e0, st));
    CK(cudaGraphLaunch(ge, st));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000.f / LAUNCHES);
  }
  std::sort(t.begin(), t.end());
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 6;
  if (argc > 2) COPIES = atoi(argv[2]);
  if (argc > 3) LAUNCHES = atoi(argv[3]);
  if (argc > 4) PACKED = atoi(argv[4]);
  printf("copies %d, launches %d, one buffer %d\n", COPIES, LAUNCHES, PACKED);
  const char *names[] = {"w4a16_gemv_f16_u4_fgs_n32_m4_k1024_s4_tma", "w4a16_gemv_f16_u4_fgs_n16_m8_k1024_s4_tma",
                         "w4a16_gemv_f16_u4_fgs_n32_m8_k1024_s3_tma"};
  const w4a16_kernel_desc *kd[3];
  for (int i = 0; i < 3; ++i)
    if (!(kd[i] = w4a16_kernel_find(names[i]))) {
      fprintf(stderr, "no %s\n", names[i]);
      return 1;
    }
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaMalloc(&a, 16 * K * 2));
  CK(cudaMalloc(&d, 16 * N * 2));
  fill<<<64, 256>>>((uint32_t *)a, 16 * K / 2, 99u, 0x03ff03ffu, 0x34003400u);  // fp16 in [0.25, 0.5)
  std::vector<void *> held;
  printf("round held_MB w0_ptr | 32x4x1024s4 M1 M2 | 16x8x1024s4 M1 M2 | 32x8x1024s3 M1 M2\n");
  for (int r = 0; r < rounds; ++r) {
    size_t hold = r == 0 ? 0 : (size_t)(r * 37 % 11 + 1) * 2 * 1024 * 1024 + 65536 * r;
    if (hold) {
      void *p;
      CK(cudaMalloc(&p, hold));
      held.push_back(p);
    }
    alloc_weights(1234u + 17u * r);
    printf("%d %.2f %p |", r, hold / 1048576.0, w[0]);
    for (int i = 0; i < 3; ++i)
      for (int m = 1; m <= 2; ++m) printf(" %.3f", time_kernel(kd[i], m, st));
    // the same again without reallocating
    printf(" | again");
    for (int i = 0; i < 3; ++i)
      for (int m = 1; m <= 2; ++m) printf(" %.3f", time_kernel(kd[i], m, st));
    printf("\n");
    fflush(stdout);
    free_weights();
  }
  return 0;
}

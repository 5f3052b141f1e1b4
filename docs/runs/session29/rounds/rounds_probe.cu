// rounds_probe.cu - prepared in the twenty-ninth session for the next (not run): which predecessor's
// graph leaves the SMs in the state where the fp16 32x4x1024 s4 TMA GEMV runs fast on 4096x4096 (H200
// 3.60-3.66 us at M = 1..4, H100 4.13-4.18, in the profiler's rounds on a2e76e3's build; 4.5-4.7 once
// every launch asks for the whole carveout, ac46d90). For every kernel P that implements the problem
// (and "none"): P's graph, then X's (32x4x1024 s4), back to back on one stream, events around X's
// replay only; five repetitions, median per launch of X. Then the profiler's rounds over all kernels
// (list order, the start one further each round), X's median. Graphs as runtime/timing.c: 240 launches
// over 24 copies of W + scales in one buffer, A and D shared.
// argv: M (default 2), X's name (default the 32x4x1024 s4 fp16 kernel).
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

static const int N = 4096, K = 4096, COPIES = 24, LAUNCHES = 240;

struct cand {
  const w4a16_kernel_desc *k;
  cudaGraphExec_t exec;
  void *ws;
};

int main(int argc, char **argv) {
  const int m = argc > 1 ? atoi(argv[1]) : 2;
  const char *xname = argc > 2 ? argv[2] : "w4a16_gemv_f16_u4_fgs_n32_m4_k1024_s4_tma";
  const size_t wb = (size_t)N * K / 2, sb = (size_t)N * (K / 128) * 2, cb = wb + sb;
  char *rot;
  void *a, *d;
  CK(cudaMalloc(&rot, cb * COPIES));
  CK(cudaMalloc(&a, (size_t)16 * K * 2));
  CK(cudaMalloc(&d, (size_t)16 * N * 2));
  for (int c = 0; c < COPIES; ++c) {
    fill<<<264, 256>>>((uint32_t *)(rot + c * cb), wb / 4, 1234u + c, 0xffffffffu, 0u);
    fill<<<264, 256>>>((uint32_t *)(rot + c * cb + wb), sb / 4, 77u + c, 0x03ff03ffu, 0x20002000u);
  }
  fill<<<64, 256>>>((uint32_t *)a, (size_t)16 * K / 2, 99u, 0x03ff03ffu, 0x34003400u);
  CK(cudaDeviceSynchronize());
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  w4a16_problem p;
  memset(&p, 0, sizeof p);
  p.m = m;
  p.n = N;
  p.k = K;
  p.group_size = 128;
  p.mode = W4A16_FINEGRAINED_SCALE_ONLY;
  p.dtype = W4A16_DTYPE_F16;
  std::vector<cand> cands;
  int xi = -1;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (w4a16_can_implement(k, &p) != W4A16_STATUS_OK) continue;
    size_t ws_bytes = 0;
    if (w4a16_workspace_size(k, &p, 0, &ws_bytes) != W4A16_STATUS_OK) continue;
    cand c = {k, nullptr, nullptr};
    if (ws_bytes) CK(cudaMalloc(&c.ws, ws_bytes));
    w4a16_gemm_args ga;
    memset(&ga, 0, sizeof ga);
    ga.problem = p;
    ga.a = a;
    ga.d = d;
    ga.alpha = 1.f;
    // one checked launch (a kernel not built for this device is left out)
    ga.w = rot;
    ga.scales = rot + wb;
    if (w4a16_gemm(&ga, k, c.ws, ws_bytes, st) != W4A16_STATUS_OK) continue;
    CK(cudaStreamSynchronize(st));
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (int l = 0; l < LAUNCHES; ++l) {
      ga.w = rot + (size_t)(l % COPIES) * cb;
      ga.scales = rot + (size_t)(l % COPIES) * cb + wb;
      if (w4a16_gemm(&ga, k, c.ws, ws_bytes, st) != W4A16_STATUS_OK) {
        fprintf(stderr, "%s: %s\n", k->name, w4a16_last_error_message());
        exit(1);
      }
    }
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&c.exec, g, 0));
    CK(cudaGraphDestroy(g));
    if (strcmp(k->name, xname) == 0) xi = (int)cands.size();
    cands.push_back(c);
  }
  if (xi < 0) {
    fprintf(stderr, "no %s for M = %d\n", xname, m);
    return 1;
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto timed_x = [&](int pred) {
    std::vector<float> t;
    for (int rep = 0; rep < 5; ++rep) {
      if (pred >= 0) CK(cudaGraphLaunch(cands[pred].exec, st));
      CK(cudaEventRecord(e0, st));
      CK(cudaGraphLaunch(cands[xi].exec, st));
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1000.f / LAUNCHES);
    }
    std::sort(t.begin(), t.end());
    return t[2];
  };
  printf("M = %d, X = %s, %zu candidates\n", m, xname, cands.size());
  printf("%-60s %.3f us\n", "(none: X after an idle GPU)", timed_x(-1));
  for (size_t i = 0; i < cands.size(); ++i) printf("%-60s %.3f us\n", cands[i].k->name, timed_x((int)i));
  // the profiler's rounds: every candidate once a round, events between, the start one further each round
  const int n = (int)cands.size(), rounds = 9;
  std::vector<cudaEvent_t> ev(n + 1);
  for (auto &e : ev) CK(cudaEventCreate(&e));
  std::vector<float> tx;
  for (int r = 0; r < rounds + 1; ++r) {
    CK(cudaEventRecord(ev[0], st));
    int xpos = -1;
    for (int j = 0; j < n; ++j) {
      const int c = (r + j) % n;
      if (c == xi) xpos = j;
      CK(cudaGraphLaunch(cands[c].exec, st));
      CK(cudaEventRecord(ev[j + 1], st));
    }
    CK(cudaEventSynchronize(ev[n]));
    float ms;
    CK(cudaEventElapsedTime(&ms, ev[xpos], ev[xpos + 1]));
    if (r > 0) tx.push_back(ms * 1000.f / LAUNCHES);  // round 0 untimed
  }
  std::sort(tx.begin(), tx.end());
  printf("%-60s %.3f us (median of %d rounds; min %.3f max %.3f)\n", "X in the profiler's rounds", tx[tx.size() / 2],
         rounds, tx.front(), tx.back());
  return 0;
}

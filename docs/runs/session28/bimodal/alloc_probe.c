/* alloc_probe.c - scratch: the fp16 32x4x1024 / 16x8x1024 TMA GEMVs on 4096x4096 M = 2 after several
   allocation histories (a pad held during profiling, or larger problems profiled first). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include "w4a16/select.h"
#include "w4a16/w4a16.h"

static void run(const char *label) {
  w4a16_problem p = {0};
  p.m = 2; p.n = 4096; p.k = 4096; p.group_size = 128;
  p.mode = W4A16_FINEGRAINED_SCALE_ONLY; p.dtype = W4A16_DTYPE_F16;
  w4a16_profile_result r[64];
  int n = 0;
  w4a16_status st = w4a16_profile(&p, NULL, r, 64, &n);
  double a = 0, b = 0;
  for (int i = 0; i < n; ++i) {
    if (strstr(r[i].kernel->name, "f16_u4_fgs_n32_m4_k1024_s4_tma")) a = r[i].median_us;
    if (strstr(r[i].kernel->name, "f16_u4_fgs_n16_m8_k1024_s4_tma")) b = r[i].median_us;
  }
  printf("%-28s st %d  32x4x1024 %.3f  16x8x1024 %.3f  ratio %.3f\n", label, (int)st, a, b, a / b);
  fflush(stdout);
}

static void profile_other(int64_t m, int64_t n, int64_t k) {
  w4a16_problem p = {0};
  p.m = m; p.n = n; p.k = k; p.group_size = 128;
  p.mode = W4A16_FINEGRAINED_SCALE_ONLY; p.dtype = W4A16_DTYPE_F16;
  w4a16_profile_result r[64];
  int got = 0;
  w4a16_profile(&p, NULL, r, 64, &got);
}

int main(void) {
  run("first");
  run("again");
  const size_t pads[] = {2u << 20, 6u << 20, 32u << 20, 256u << 20, 1u << 30, 4ull << 30, 20ull << 30};
  for (size_t i = 0; i < sizeof pads / sizeof pads[0]; ++i) {
    void *pad = NULL;
    if (cudaMalloc(&pad, pads[i]) != cudaSuccess) { printf("pad %zu MB: no memory\n", pads[i] >> 20); continue; }
    char lab[64];
    snprintf(lab, sizeof lab, "pad %zu MB held", pads[i] >> 20);
    run(lab);
    cudaFree(pad);
  }
  run("pads freed");
  for (int64_t m = 1; m <= 16; ++m) profile_other(m, 6144, 4096);
  run("after 6144x4096 M=1..16");
  run("again");
  profile_other(1, 4096, 4096);
  run("after 4096x4096 M=1");
  for (int64_t m = 1; m <= 16; ++m) profile_other(m, 28672, 4096);
  run("after 28672x4096 M=1..16");
  return 0;
}

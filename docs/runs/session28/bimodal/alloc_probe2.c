/* alloc_probe2.c - scratch: which earlier problem flips the fp16 32x4x1024 TMA GEMV on 4096x4096 M = 2
   into its fast state: argv = M N K [M N K ...] profiled first (w4a16_profile, every kernel), then the
   test twice; optional env PROBE_ONLY=substring: profile the earlier problems with that kernel only
   (w4a16_gemm launches, 200 times) instead of w4a16_profile. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "w4a16/select.h"
#include "w4a16/w4a16.h"

static w4a16_problem prob(int64_t m, int64_t n, int64_t k) {
  w4a16_problem p = {0};
  p.m = m; p.n = n; p.k = k; p.group_size = 128;
  p.mode = W4A16_FINEGRAINED_SCALE_ONLY; p.dtype = W4A16_DTYPE_F16;
  return p;
}

static void run(const char *label) {
  w4a16_problem p = prob(2, 4096, 4096);
  w4a16_profile_result r[64];
  int n = 0;
  w4a16_status st = w4a16_profile(&p, NULL, r, 64, &n);
  double a = 0, b = 0;
  for (int i = 0; i < n; ++i) {
    if (strstr(r[i].kernel->name, "f16_u4_fgs_n32_m4_k1024_s4_tma")) a = r[i].median_us;
    if (strstr(r[i].kernel->name, "f16_u4_fgs_n16_m8_k1024_s4_tma")) b = r[i].median_us;
  }
  printf("%-40s st %d  32x4x1024 %.3f  16x8x1024 %.3f  ratio %.3f\n", label, (int)st, a, b, a / b);
  fflush(stdout);
}

int main(int argc, char **argv) {
  char lab[256] = "after";
  for (int i = 1; i + 2 < argc; i += 3) {
    w4a16_problem p = prob(atoll(argv[i]), atoll(argv[i + 1]), atoll(argv[i + 2]));
    w4a16_profile_result r[64];
    int got = 0;
    w4a16_profile(&p, NULL, r, 64, &got);
    size_t l = strlen(lab);
    snprintf(lab + l, sizeof lab - l, " %sx%sx%s", argv[i], argv[i + 1], argv[i + 2]);
  }
  run(lab);
  run("again");
  return 0;
}

/* picks_probe.c - thirty-first session: the kernel w4a16_select() picks (config cache off: the
   heuristic) for the eight default layers at M = 1, 2, 4, 8, 16, bf16 scale-only g128, printed as
   "NxK M kernel source" lines for eager_rank.py's problems. */
#include <stdio.h>
#include <stdlib.h>

#include "w4a16/w4a16.h"

int main(void) {
  const long long layers[][2] = {{6144, 4096},  {4096, 4096}, {28672, 4096}, {4096, 14336},
                                 {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}};
  const int ms[] = {1, 2, 4, 8, 16};
  for (size_t l = 0; l < sizeof layers / sizeof layers[0]; ++l)
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; ++i) {
      w4a16_problem p = {ms[i], layers[l][0], layers[l][1], 0, 0, 128, W4A16_FINEGRAINED_SCALE_ONLY,
                         W4A16_DTYPE_BF16, 0};
      const w4a16_kernel_desc *kd = NULL;
      w4a16_selection_source src;
      w4a16_status st = w4a16_select(&p, &kd, &src);
      if (st != W4A16_STATUS_OK) {
        printf("%lldx%lld %d error %s\n", layers[l][0], layers[l][1], ms[i], w4a16_last_error_message());
        continue;
      }
      printf("%lldx%lld %d %s %s\n", layers[l][0], layers[l][1], ms[i], kd->name,
             src == W4A16_SELECTED_BY_CACHE ? "cache" : "heuristic");
    }
  return 0;
}

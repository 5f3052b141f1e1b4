/* select.c - placeholder selection: the first kernel that can implement the problem
   and runs on this device. (Being replaced by the heuristic + config cache.) */
#include "select_internal.h"

const w4a16_kernel_desc *w4a16_select_kernel(const w4a16_problem *problem, int sm_count, int cc) {
  w4a16_device_info info = {0, cc, sm_count, 1 << 30};
  w4a16_current_device(&info);
  size_t n;
  const w4a16_kernel_desc *t = w4a16_registry_table(&n);
  for (size_t i = 0; i < n; ++i)
    if (w4a16_can_implement(&t[i], problem) == W4A16_STATUS_OK &&
        w4a16_kernel_runs_here(&t[i], &info) == W4A16_STATUS_OK)
      return &t[i];
  return NULL;
}

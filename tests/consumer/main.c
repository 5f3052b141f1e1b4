#include <stdio.h>
#include <w4a16/w4a16.h>
/* an installed-library consumer: find_package(w4a16) or pkg-config, then one call */
int main(void) {
  printf("w4a16 %s, %zu kernels, first %s\n", w4a16_version_string(), w4a16_kernel_count(),
         w4a16_kernel_get(0)->name);
  return w4a16_kernel_count() > 0 ? 0 : 1;
}

/* registry.c - lookups over the generated kernel table. */
#include <string.h>

#include "internal.h"

size_t w4a16_kernel_count(void) {
  size_t n;
  w4a16_registry_table(&n);
  return n;
}

const w4a16_kernel_desc *w4a16_kernel_get(size_t i) {
  size_t n;
  const w4a16_kernel_desc *t = w4a16_registry_table(&n);
  return i < n ? &t[i] : NULL;
}

const w4a16_kernel_desc *w4a16_kernel_find(const char *name) {
  if (!name) {
    w4a16_fail(W4A16_STATUS_NULL_POINTER, "w4a16_kernel_find: name is NULL");
    return NULL;
  }
  size_t n;
  const w4a16_kernel_desc *t = w4a16_registry_table(&n);
  size_t lo = 0, hi = n; /* the table is sorted by name (strcmp order of the generator's sort) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(t[mid].name, name);
    if (c == 0) return &t[mid];
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  w4a16_fail(W4A16_STATUS_UNKNOWN_KERNEL, "no registered kernel is named '%s'", name);
  return NULL;
}

uint64_t w4a16_registry_fingerprint(void) {
  size_t n;
  const w4a16_kernel_desc *t = w4a16_registry_table(&n);
  uint64_t h = W4A16_FNV1A_OFFSET;
  for (size_t i = 0; i < n; ++i) {
    h = w4a16_fnv1a(h, t[i].name, strlen(t[i].name));
    h = w4a16_fnv1a(h, "\n", 1);
  }
  return h;
}

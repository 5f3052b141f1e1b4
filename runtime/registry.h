/* registry.h - internal: the generated kernel table and family rules. */
#ifndef W4A16_REGISTRY_H
#define W4A16_REGISTRY_H

#include "kernel_abi.h"
#include "w4a16/w4a16.h"

/* The generated table (build/generated/registry.c), sorted by name. */
const w4a16_kernel_desc *w4a16_registry_table(size_t *count);
/* The grouped kernels (w4a16_kernel_desc.grouped = 1), sorted by name, apart from the dense table. */
const w4a16_kernel_desc *w4a16_grouped_registry_table(size_t *count);

#endif

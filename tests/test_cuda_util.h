/* test_cuda_util.h - what the GPU test programs share: a CUDA call that must succeed. */
#ifndef W4A16_TEST_CUDA_UTIL_H
#define W4A16_TEST_CUDA_UTIL_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs x, a CUDA runtime call; on an error prints the file, line, call and CUDA's message and exits
   with status 1 (a failed test, not a skip). */
#define CUDA_OK(x)                                                                                  \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));           \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)

#endif

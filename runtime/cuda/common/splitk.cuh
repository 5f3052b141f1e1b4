// splitk.cuh - the deterministic split-K reduction shared by the families.
//
// Protocol (runtime/families.c chooses p->split_k; runtime checks workspace):
// K slice z covers the k-blocks [z*k_iters/split_k, (z+1)*k_iters/split_k), k_iters = K/tile_k
// (the sm80 and GEMV families are only given splits that divide k_iters, so their slices are
// equal; the sm90 family takes any split <= k_iters).
// A kernel launched with split_k > 1 writes, for each K slice z in [0, split_k),
// its fp32 partial sums (no alpha, no bias) to
//     workspace[(z * M + m) * N + n]            (float, row stride N)
// and its launch function then enqueues w4a16_splitk_reduce_launch, which sums
// the slices in the fixed order z = 0, 1, ... (same bits on every run), applies
// alpha and bias, converts and writes D with row stride ldd.
#ifndef W4A16_COMMON_SPLITK_CUH
#define W4A16_COMMON_SPLITK_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

static __device__ __forceinline__ float w4a16_to_float(__half x) { return __half2float(x); }
static __device__ __forceinline__ float w4a16_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> static __device__ __forceinline__ T w4a16_from_float(float x);
template <> __device__ __forceinline__ __half w4a16_from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 w4a16_from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// The reduction itself: a thread per 4 consecutive outputs of a row (N % 4 == 0 holds for every
// family), blockIdx.x along the row's quads, blockIdx.y along the rows (grid-strided). No integer
// division: the reduction runs between two GEMMs, on the critical path, with little work per thread
// (against a grid-strided quad index split by 64-bit division and modulo: 0.97-1.00x the time of
// the sm90 split-K problems on the H100). Shared by the plain
// kernel below and the GEMV's and the sm90 family's programmatic-dependent-launch variants, so all
// give the same bits: per output, the slices z = 0, 1, ... summed from 0, times alpha, plus the
// bias if any. Grid: w4a16_splitk_reduce_grid.
template <typename T>
static __device__ __forceinline__ void w4a16_splitk_reduce_body(const float *__restrict__ ws, int split_k, int m,
                                                                int n, float alpha, const T *__restrict__ bias,
                                                                T *__restrict__ d, int64_t ldd) {
  const int col = (int)(blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (col >= n) return;
  float b[4] = {0.f, 0.f, 0.f, 0.f};
  if (bias) {
#pragma unroll
    for (int i = 0; i < 4; ++i) b[i] = w4a16_to_float(bias[col + i]);
  }
  const size_t slice = (size_t)m * (size_t)n;
  for (int row = (int)blockIdx.y; row < m; row += (int)gridDim.y) {
    const float *src = ws + (size_t)row * (size_t)n + col;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int z = 0; z < split_k; ++z, src += slice) {
      const float4 v = *reinterpret_cast<const float4 *>(src);
      acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
    }
    float r[4] = {acc.x * alpha, acc.y * alpha, acc.z * alpha, acc.w * alpha};
    T out[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (bias) r[i] += b[i];
      out[i] = w4a16_from_float<T>(r[i]);
    }
    // 8-byte store: ldd % 8 == 0 and col % 4 == 0 keep it aligned
    *reinterpret_cast<uint2 *>(d + (int64_t)row * ldd + col) = *reinterpret_cast<uint2 *>(out);
  }
}

// The grid of the reduction (256 threads a CTA): ceil(N / 4 / 256) CTAs along a row, one per row
// along M up to about 8 CTAs per SM in all (then each walks several rows).
static inline dim3 w4a16_splitk_reduce_grid(int m, int n, int sm_count) {
  const int gx = (n / 4 + 255) / 256;
  const int most = (sm_count > 0 ? sm_count : 132) * 8 / gx;
  const int gy = m < most ? m : (most > 1 ? most : 1);
  return dim3((unsigned)gx, (unsigned)gy, 1);
}

template <typename T>
__global__ void w4a16_splitk_reduce_kernel(const float *__restrict__ ws, int split_k, int m, int n,
                                           float alpha, const T *__restrict__ bias, T *__restrict__ d,
                                           int64_t ldd) {
  w4a16_splitk_reduce_body<T>(ws, split_k, m, n, alpha, bias, d, ldd);
}

template <typename T>
static inline cudaError_t w4a16_splitk_reduce_launch(const float *ws, int split_k, int m, int n,
                                                     float alpha, const T *bias, T *d, int64_t ldd,
                                                     int sm_count, cudaStream_t stream) {
  w4a16_splitk_reduce_kernel<T><<<w4a16_splitk_reduce_grid(m, n, sm_count), 256, 0, stream>>>(
      ws, split_k, m, n, alpha, bias, d, ldd);
  return cudaGetLastError();
}

#endif

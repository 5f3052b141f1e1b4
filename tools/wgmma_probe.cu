// wgmma_probe.cu - how fast can the sm90 consumer's k-block run with no memory system in the way?
//
// Diagnostic (not part of the library): one CTA per SM, NC consumer warpgroups of 64 weight rows
// each, every k-block reading the same shared-memory stage (packed weights, scales, a swizzled
// activation tile of TM tokens x 256 k), so only the consumer's own work is timed: the
// conversion of common/dequant.cuh (+ the scale multiply) and RS wgmma m64 x TM x k16, in the
// half-block order of gemm_sm90.cuh (Cfg::kHalves). MODE 0: both; 1: wgmma only (raw words as
// fragments); 2: conversion only (fragments folded into a checksum). Prints cycles per k-block
// per SM and the tensor time of one k-block (TM x 64 x 256 x NC FMAs at 2048 FMA / clock / SM).
//
// SYNC adds the pipeline's synchronization: 1 every consumer thread arrives on a stage barrier after
// each k-block (as gemm_sm90.cuh's release), 2 one arrival per warp, 4 each k-block also waits on
// the barrier phase of two k-blocks before (as a full barrier), 8 the warpgroups take turns issuing
// their halves (named barriers). H100 / H200: TM 64 1441 cycles a k-block (71 % of the tensor
// time), wgmma alone 1041, conversion alone 727; SYNC 1-13 change it by 0-9 %.
//
// RING > 0 (MODE 0): one k16 step at a time, each its own wgmma group, its fragments in one of RING
// register slots. KS = 1 (NC = 4): warpgroups 0, 1 and 2, 3 take the first and second half of each
// k-block's steps on the same rows (a K split). H100: TM 64 ring 2-4 1383-1394 cycles, K split
// 1338-1354; neither gain holds in the kernel: the probe has no memory pipeline, so measure an order
// in gemm_sm90.cuh before trusting it.
//
// nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Iruntime/cuda -Iinclude
//      tools/wgmma_probe.cu -o wgmma_probe
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "common/dequant.cuh"
#include "sm90/sm90_ptx.cuh"
#include "sm90/sm90_wgmma.cuh"

#define KB_ITERS 512
using namespace w4a16_sm90;

// one arrival for the warp, by the lane elect.sync picks
static __device__ __forceinline__ void mbar_arrive_local_elect(uint32_t bar) {
  asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\n@p mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::"r"(bar)
               : "memory");
}
static __device__ __forceinline__ void named_bar_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

static __device__ __forceinline__ uint32_t mul_bf16x2(uint32_t a, uint32_t b) {
  __nv_bfloat162 r = __hmul2(*reinterpret_cast<__nv_bfloat162 *>(&a), *reinterpret_cast<__nv_bfloat162 *>(&b));
  return *reinterpret_cast<uint32_t *>(&r);
}
static __device__ __forceinline__ uint32_t word_at(const uint4 &v, int k16) {
  return (k16 & 3) == 0 ? v.x : (k16 & 3) == 1 ? v.y : (k16 & 3) == 2 ? v.z : v.w;
}

template <int MODE, int TM, int NC, int SYNC = 0, int RING = 0, int KS = 0>
__global__ void __launch_bounds__(128 * NC, 1) probe(unsigned long long *cycles, float *sink) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t base = (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) + 1023u) & ~1023u;
  const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
  // stage: activations [4 boxes][TM rows][128 bytes], then packed weights, then scales
  const uint32_t act = base, wts = base + 4 * TM * 128, scl = wts + NC * 64 * 128;
  for (int i = tid; i < (4 * TM * 128 + NC * 64 * 128 + 1024) / 4; i += blockDim.x) {
    const uint32_t v = 0x3c003c00u ^ (uint32_t)(i * 2654435761u & 0x00ff00ffu);
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(base + 4 * i), "r"(v));
  }
  // SYNC 1: every consumer thread arrives on a stage barrier after each k-block (as
  // gemm_sm90.cuh's release); 2: one arrival per warp (elected lane); 4: each k-block also waits
  // for the barrier phase of two k-blocks before (as the stage's full barrier)
  const uint32_t bar = scl + 1024;
  if (tid == 0) {
    for (int s = 0; s < 4; ++s) mbar_init(bar + 8 * s, (SYNC & 2) ? 4 * NC : 128 * NC);
    fence_barrier_init();
  }
  fence_proxy_async_shared();
  __syncthreads();
  float acc[TM / 2];
#pragma unroll
  for (int i = 0; i < TM / 2; ++i) acc[i] = 0.f;
  uint32_t chk = 0;
  uint32_t frag[16][4];
  if ((SYNC & 8) && wg == 1) named_bar_arrive(1, 256);
  const long long t0 = clock64();
  for (int kb = 0; kb < KB_ITERS; ++kb) {
    uint4 wq[4];
    const uint32_t wrow = wts + ((wg * 4 + warp) * 4) * 512 % (NC * 64 * 128);
#pragma unroll
    for (int kt = 0; kt < 4; ++kt) wq[kt] = lds128(wrow + (kt * 512 + lane * 16 + (kb & 1) * 0) % (NC * 64 * 128));
    const uint32_t s_lo = lds16(scl + (warp * 16 + (lane >> 2)) * 2 + (kb & 1) * 256);
    const uint32_t s_hi = lds16(scl + (warp * 16 + (lane >> 2) + 8) * 2 + (kb & 1) * 256);
    const uint32_t sl = s_lo | (s_lo << 16), sh = s_hi | (s_hi << 16);
    if ((SYNC & 4) && kb >= 2) mbar_wait(bar + 8 * ((kb - 2) & 3), ((kb - 2) >> 2) & 1);
    if constexpr (KS == 1 && MODE == 0) {
      // KS: the k-block's 16 k16 steps split between warpgroup pairs (NC = 4: warpgroups 0, 1 take
      // steps 0..7 of rows 0..127, warpgroups 2, 3 steps 8..15), as two halves of 4 steps (RING 0)
      // or a ring of RING slots
      const int ks0 = (wg >> 1) * 8;
      uint4 wk[2];
#pragma unroll
      for (int kt = 0; kt < 2; ++kt) wk[kt] = lds128(wrow + ((ks0 / 4 + kt) * 512 + lane * 16) % (NC * 64 * 128));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (RING == 0) wgmma_wait<1>();
#pragma unroll
        for (int i = 4 * h; i < 4 * h + 4; ++i) {
          uint32_t(&f)[4] = RING ? frag[i % (RING ? RING : 1)] : frag[i];
          if (RING) wgmma_wait<(RING ? RING - 1 : 0)>();
          uint32_t q[4];
          w4a16_u4x8_to_bf16x8<8>(word_at(wk[i >> 2], i), q);
          f[0] = mul_bf16x2(q[0], sl);
          f[1] = mul_bf16x2(q[1], sh);
          f[2] = mul_bf16x2(q[2], sl);
          f[3] = mul_bf16x2(q[3], sh);
          if (RING) {
            wgmma_fence();
            const int k16 = ks0 + i;
            const uint64_t desc = smem_desc_sw128(act + (k16 >> 2) * (TM * 128) + (k16 & 3) * 32);
            w4a16_wgmma_rs<TM, __nv_bfloat16>::run(acc, f, desc, 1);
            wgmma_commit();
          }
        }
        if (RING == 0) {
          wgmma_fence();
#pragma unroll
          for (int i = 4 * h; i < 4 * h + 4; ++i) {
            const int k16 = ks0 + i;
            const uint64_t desc = smem_desc_sw128(act + (k16 >> 2) * (TM * 128) + (k16 & 3) * 32);
            w4a16_wgmma_rs<TM, __nv_bfloat16>::run(acc, frag[i], desc, 1);
          }
          wgmma_commit();
        }
      }
    } else if constexpr (RING > 0 && MODE == 0) {
      // RING: one k16 step at a time, each its own wgmma group, its fragments in one of RING
      // register slots: the step's conversion runs while the previous steps' wgmmas are in flight
#pragma unroll
      for (int k16 = 0; k16 < 16; ++k16) {
        uint32_t(&f)[4] = frag[k16 % RING];
        wgmma_wait<RING - 1>();  // the slot's last reader (RING steps back) is done
        const uint32_t w = word_at(wq[k16 >> 2], k16);
        uint32_t q[4];
        w4a16_u4x8_to_bf16x8<8>(w, q);
        f[0] = mul_bf16x2(q[0], sl);
        f[1] = mul_bf16x2(q[1], sh);
        f[2] = mul_bf16x2(q[2], sl);
        f[3] = mul_bf16x2(q[3], sh);
        wgmma_fence();
        const uint64_t desc = smem_desc_sw128(act + (k16 >> 2) * (TM * 128) + (k16 & 3) * 32);
        w4a16_wgmma_rs<TM, __nv_bfloat16>::run(acc, f, desc, 1);
        wgmma_commit();
        if (k16 == 7 && (SYNC & 1)) mbar_arrive_local(bar + 8 * (kb & 3));
      }
    } else {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (MODE != 2) wgmma_wait<1>();
#pragma unroll
      for (int k16 = 8 * h; k16 < 8 * h + 8; ++k16) {
        const uint32_t w = word_at(wq[k16 >> 2], k16);
        if (MODE == 1) {
          frag[k16][0] = w;
          frag[k16][1] = w ^ 0x11111111u;
          frag[k16][2] = w ^ 0x22222222u;
          frag[k16][3] = w ^ 0x33333333u;
        } else {
          uint32_t q[4];
          w4a16_u4x8_to_bf16x8<8>(w, q);
          frag[k16][0] = mul_bf16x2(q[0], sl);
          frag[k16][1] = mul_bf16x2(q[1], sh);
          frag[k16][2] = mul_bf16x2(q[2], sl);
          frag[k16][3] = mul_bf16x2(q[3], sh);
        }
      }
      if (MODE == 2) {
#pragma unroll
        for (int k16 = 8 * h; k16 < 8 * h + 8; ++k16) chk ^= frag[k16][0] + frag[k16][1] + frag[k16][2] + frag[k16][3];
      } else {
        // SYNC 8: the warpgroups take turns issuing their halves (named barriers 1 + wg)
        if (SYNC & 8) named_bar_sync(1 + wg, 256);
        wgmma_fence();
#pragma unroll
        for (int k16 = 8 * h; k16 < 8 * h + 8; ++k16) {
          const uint64_t desc = smem_desc_sw128(act + (k16 >> 2) * (TM * 128) + (k16 & 3) * 32);
          w4a16_wgmma_rs<TM, __nv_bfloat16>::run(acc, frag[k16], desc, 1);
        }
        wgmma_commit();
        if ((SYNC & 8) && !(wg == 1 && kb == KB_ITERS - 1 && h == 1)) named_bar_arrive(1 + (wg ^ 1), 256);
      }
      if (h == 0 && (SYNC & 1)) mbar_arrive_local(bar + 8 * (kb & 3));
      if (h == 0 && (SYNC & 2)) mbar_arrive_local_elect(bar + 8 * (kb & 3));
    }
    }
  }
  if (MODE != 2) wgmma_wait<0>();
  const long long t1 = clock64();
  float s = (float)chk;
#pragma unroll
  for (int i = 0; i < TM / 2; ++i) s += acc[i];
  sink[blockIdx.x * blockDim.x + tid] = s;
  if (tid == 0) cycles[blockIdx.x] = (unsigned long long)(t1 - t0);
}

template <int MODE, int TM, int NC, int SYNC = 0, int RING = 0, int KS = 0> static void run_one(const char *what) {
  const int sms = 132;
  unsigned long long *d_cyc;
  float *d_sink;
  cudaMalloc(&d_cyc, sms * sizeof(unsigned long long));
  cudaMalloc(&d_sink, sms * 128 * NC * sizeof(float));
  const int smem = 4 * TM * 128 + NC * 64 * 128 + 1024 + 1024 + 1024;
  cudaFuncSetAttribute(probe<MODE, TM, NC, SYNC, RING, KS>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  for (int rep = 0; rep < 3; ++rep) probe<MODE, TM, NC, SYNC, RING, KS><<<sms, 128 * NC, smem>>>(d_cyc, d_sink);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  probe<MODE, TM, NC, SYNC, RING, KS><<<sms, 128 * NC, smem>>>(d_cyc, d_sink);
  cudaEventRecord(e1);
  cudaError_t err = cudaDeviceSynchronize();
  float ms = 0.f;
  cudaEventElapsedTime(&ms, e0, e1);
  unsigned long long cyc[132];
  cudaMemcpy(cyc, d_cyc, sizeof(cyc), cudaMemcpyDeviceToHost);
  double sum = 0;
  for (int i = 0; i < sms; ++i) sum += (double)cyc[i];
  const double per_kb = sum / sms / KB_ITERS;
  const double tensor = (double)TM * 64 * 256 * (KS ? NC / 2 : NC) / 2048.0;
  printf("%-28s KS %d RING %d SYNC %d TM %3d NC %d: %7.0f cycles / k-block (tensor %5.0f, %4.0f %%), %.1f us, %s\n", what, KS, RING, SYNC, TM, NC, per_kb,
         tensor, 100.0 * tensor / per_kb, ms * 1e3, cudaGetErrorString(err));
  cudaFree(d_cyc);
  cudaFree(d_sink);
}

int main(void) {
  run_one<0, 64, 2>("convert + wgmma");
  run_one<0, 64, 2, 0, 2>("convert + wgmma");
  run_one<0, 64, 2, 0, 3>("convert + wgmma");
  run_one<0, 64, 2, 0, 4>("convert + wgmma");
  run_one<0, 64, 4>("convert + wgmma");
  run_one<0, 64, 4, 0, 0, 1>("convert + wgmma");
  run_one<0, 64, 4, 0, 2, 1>("convert + wgmma");
  run_one<0, 64, 4, 0, 4, 1>("convert + wgmma");
  run_one<0, 64, 4, 1, 0, 1>("convert + wgmma");
  run_one<0, 32, 2>("convert + wgmma");
  run_one<0, 32, 2, 0, 2>("convert + wgmma");
  run_one<0, 32, 4, 0, 0, 1>("convert + wgmma");
  run_one<0, 32, 4, 0, 2, 1>("convert + wgmma");
  run_one<0, 16, 2>("convert + wgmma");
  run_one<0, 16, 4, 0, 0, 1>("convert + wgmma");
  run_one<0, 16, 4, 0, 2, 1>("convert + wgmma");
  run_one<0, 128, 4, 0, 0, 1>("convert + wgmma");
  return 0;
}

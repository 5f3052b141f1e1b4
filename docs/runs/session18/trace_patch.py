# Applies the per-CTA timeline instrumentation (W4A16_GEMV_TMA_TRACE) to runtime/cuda/gemv/gemv_tma.cuh
# as of the eighteenth session: python3 docs/runs/session18/trace_patch.py, build with
# -DCMAKE_CUDA_FLAGS=-DW4A16_GEMV_TMA_TRACE, run the bench with W4A16_TRACE_OUT=f.bin on one problem and
# kernel, read it with docs/runs/session18/trace.py f.bin [launches] [launch index] [every n-th CTA].
# Diagnostic only (never committed to the source): the records cost ~9 % of a 4 us launch.
p='runtime/cuda/gemv/gemv_tma.cuh'
s=open(p).read()
anchor="template <typename T, int MODE, int R, int TILE_M, int STAGES, int TPW, int VAR = 0>\n__global__"
add='''#ifdef W4A16_GEMV_TMA_TRACE
#include <stdio.h>
#define W4A16_TRACE_CAP (1 << 16)
static __device__ unsigned long long w4a16_trace_n;
static __device__ unsigned long long w4a16_trace_buf[W4A16_TRACE_CAP][8];
static __device__ __forceinline__ unsigned long long w4a16_gt(void) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
static void w4a16_trace_dump(void) {
  unsigned long long n = 0;
  cudaDeviceSynchronize();
  cudaMemcpyFromSymbol(&n, w4a16_trace_n, sizeof n);
  static unsigned long long h[W4A16_TRACE_CAP][8];
  cudaMemcpyFromSymbol(h, w4a16_trace_buf, sizeof h);
  const char *o = getenv("W4A16_TRACE_OUT");
  FILE *f = fopen(o ? o : "trace.bin", "wb");
  if (!f) return;
  fwrite(&n, 8, 1, f);
  fwrite(h, sizeof h, 1, f);
  fclose(f);
}
#endif
'''
assert anchor in s
s=s.replace(anchor, add+anchor,1)
reps=[("""  extern __shared__ __align__(1024) unsigned char w4a16_gemv_tma_smem[];
  const uint32_t base0""","""#ifdef W4A16_GEMV_TMA_TRACE
  __shared__ unsigned long long tr_t1;
  const unsigned long long tr_t0 = w4a16_gt();
  unsigned long long tr_t2 = 0;
#endif
  extern __shared__ __align__(1024) unsigned char w4a16_gemv_tma_smem[];
  const uint32_t base0"""),
("""      w4a16_gemv_griddep_wait();
      for (int c = 0; c < STAGES && c < total; ++c) issue_a(c);""","""      w4a16_gemv_griddep_wait();
#ifdef W4A16_GEMV_TMA_TRACE
      tr_t1 = w4a16_gt();
#endif
      for (int c = 0; c < STAGES && c < total; ++c) issue_a(c);"""),
("""      w4a16_sm90::mbar_wait(full, phase);
      if constexpr (FAST) {""","""      w4a16_sm90::mbar_wait(full, phase);
#ifdef W4A16_GEMV_TMA_TRACE
      if (tr_t2 == 0) tr_t2 = w4a16_gt();
#endif
      if constexpr (FAST) {"""),
("""    w4a16_gemv_griddep_wait();
    // the WPR warps""","""#ifdef W4A16_GEMV_TMA_TRACE
    const unsigned long long tr_t3 = w4a16_gt();
#endif
    w4a16_gemv_griddep_wait();
    // the WPR warps"""),
("""    w4a16_gemv_store<T, MODE, NB>(args, acc, rb0 + rw, g, t, false, 0);
  }
#endif
}""","""    w4a16_gemv_store<T, MODE, NB>(args, acc, rb0 + rw, g, t, false, 0);
#ifdef W4A16_GEMV_TMA_TRACE
    if (threadIdx.x == 0 && j == my_units - 1) {
      const unsigned long long i = atomicAdd(&w4a16_trace_n, 1ull) % W4A16_TRACE_CAP;
      unsigned smid;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
      w4a16_trace_buf[i][0] = tr_t0;
      w4a16_trace_buf[i][1] = tr_t1;
      w4a16_trace_buf[i][2] = tr_t2;
      w4a16_trace_buf[i][3] = tr_t3;
      w4a16_trace_buf[i][4] = w4a16_gt();
      w4a16_trace_buf[i][5] = (unsigned long long)smid | ((unsigned long long)blockIdx.x << 32);
      w4a16_trace_buf[i][6] = (unsigned long long)args.w;
      w4a16_trace_buf[i][7] = (unsigned long long)my_units;
    }
#endif
  }
#endif
}"""),
("""  const cudaError_t attr_err = cudaFuncSetAttribute(""","""#ifdef W4A16_GEMV_TMA_TRACE
  static bool tr_reg = false;
  if (!tr_reg) {
    tr_reg = true;
    atexit(w4a16_trace_dump);
  }
#endif
  const cudaError_t attr_err = cudaFuncSetAttribute(""")]
for a,b in reps:
    assert s.count(a)==1,(a[:50],s.count(a))
    s=s.replace(a,b)
open(p,'w').write(s)

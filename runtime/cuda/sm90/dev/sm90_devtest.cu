// sm90_devtest.cu - standalone correctness and speed harness for the sm90 family, used
// while the runtime's own tests are being written (build: runtime/cuda/sm90/dev/build.sh).
//
//   sm90_devtest list
//   sm90_devtest test  PATTERN [quick]     every matching kernel against a float64 reference
//   sm90_devtest bench PATTERN [M,...] [layers]   median time vs cuBLAS bf16
//
// Packing follows docs/LAYOUT.md (written again here from the document, so the test
// also checks that the kernel reads the documented layout).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernel_abi.h"

#define K(name, ...) extern "C" int name##_launch(const struct w4a16_launch_params *p, void *stream);
#include "dev_kernels.inc"
#undef K

struct KInfo {
  const char *name;
  w4a16_launch_fn launch;
  int bf16, mode, tn, tm, tk, cn, cm, pingpong, stages, smem;
};
static const KInfo kKernels[] = {
#define K(name, ...) {#name, name##_launch, __VA_ARGS__},
#include "dev_kernels.inc"
#undef K
};

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
      exit(2);                                                                                  \
    }                                                                                           \
  } while (0)

static bool match(const char *pat, const char *name) {
  // '*' wildcards, pieces in order; no '*' = whole name
  std::string p(pat), n(name);
  size_t pos = 0, start = 0;
  bool first = true;
  while (true) {
    size_t star = p.find('*', start);
    std::string piece = p.substr(start, star == std::string::npos ? std::string::npos : star - start);
    if (first && star == std::string::npos) return p == n;
    if (first) {
      if (n.compare(0, piece.size(), piece) != 0) return false;
      pos = piece.size();
    } else if (star == std::string::npos) {
      return n.size() >= pos + piece.size() && n.compare(n.size() - piece.size(), piece.size(), piece) == 0;
    } else {
      size_t f = n.find(piece, pos);
      if (f == std::string::npos) return false;
      pos = f + piece.size();
    }
    first = false;
    start = star + 1;
  }
}

static uint16_t to_dt(float f, bool bf16) {
  if (bf16) {
    __nv_bfloat16 h = __float2bfloat16_rn(f);
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
  }
  __half h = __float2half_rn(f);
  uint16_t u;
  memcpy(&u, &h, 2);
  return u;
}
static float from_dt(uint16_t u, bool bf16) {
  if (bf16) {
    __nv_bfloat16 h;
    memcpy(&h, &u, 2);
    return __bfloat162float(h);
  }
  __half h;
  memcpy(&h, &u, 2);
  return __half2float(h);
}

// docs/LAYOUT.md
static void pack(const uint8_t *q, int n, int k, uint32_t *out) {
  const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  for (int nt = 0; nt < n / 16; ++nt)
    for (int kt = 0; kt < k / 64; ++kt)
      for (int l = 0; l < 32; ++l)
        for (int j = 0; j < 4; ++j) {
          const int g = l / 4, t = l % 4;
          int er[8], ec[8];
          for (int e = 0; e < 8; ++e) {
            er[e] = g + ((e >> 1) & 1) * 8;
            ec[e] = 2 * t + (e & 1) + ((e >> 2) & 1) * 8;
          }
          uint32_t w = 0;
          for (int p = 0; p < 8; ++p) {
            const int e = order[p];
            const int row = nt * 16 + er[e], col = kt * 64 + 16 * j + ec[e];
            w |= (uint32_t)(q[(size_t)row * k + col] & 15) << (4 * p);
          }
          out[(((size_t)nt * (k / 64) + kt) * 32 + l) * 4 + j] = w;
        }
}

// comma-separated patterns
static const KInfo *find_kernels(const char *pats, std::vector<const KInfo *> &v) {
  std::vector<std::string> ps;
  std::string cur;
  for (const char *c = pats;; ++c) {
    if (*c == ',' || !*c) {
      if (!cur.empty()) ps.push_back(cur);
      cur.clear();
      if (!*c) break;
    } else {
      cur += *c;
    }
  }
  for (const KInfo &k : kKernels)
    for (const std::string &p : ps)
      if (p == "all" || match(p.c_str(), k.name)) {
        v.push_back(&k);
        break;
      }
  return v.empty() ? nullptr : v[0];
}

// ------------------------------------------------------------------------------- test
struct Case {
  int m, n, k, group, split, sms;
  bool bias;
  float alpha;
  int lda_pad, ldd_pad;
};

static int run_case(const KInfo &kk, const Case &c, std::mt19937 &rng, bool verbose) {
  const bool bf = kk.bf16;
  const int M = c.m, N = c.n, Kd = c.k;
  const int G = Kd / c.group;
  const int64_t lda = Kd + c.lda_pad, ldd = N + c.ldd_pad;
  std::uniform_int_distribution<int> qd(0, 15);
  std::uniform_real_distribution<float> ud(-1.f, 1.f), sd(0.5f, 1.5f);
  std::vector<uint8_t> q((size_t)N * Kd);
  for (auto &x : q) x = (uint8_t)qd(rng);
  std::vector<uint16_t> a((size_t)M * lda), s((size_t)G * N), z((size_t)G * N), b(N);
  for (auto &x : a) x = to_dt(ud(rng), bf);
  for (auto &x : s) x = to_dt(sd(rng) / 16.f, bf);
  for (size_t i = 0; i < z.size(); ++i) z[i] = to_dt(-8.f * from_dt(s[i], bf) + 0.1f * ud(rng), bf);
  for (auto &x : b) x = to_dt(ud(rng), bf);
  std::vector<uint32_t> w((size_t)N * Kd / 8);
  pack(q.data(), N, Kd, w.data());

  // reference
  std::vector<double> wd((size_t)N * Kd);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < Kd; ++k) {
      const double sv = from_dt(s[(size_t)(k / c.group) * N + n], bf);
      const double qv = q[(size_t)n * Kd + k];
      wd[(size_t)n * Kd + k] = kk.mode == 2 ? sv * qv + from_dt(z[(size_t)(k / c.group) * N + n], bf) : sv * (qv - 8);
    }
  std::vector<double> ref((size_t)M * N);
  std::vector<double> arow(Kd);
  for (int m = 0; m < M; ++m) {
    for (int k = 0; k < Kd; ++k) arow[k] = from_dt(a[(size_t)m * lda + k], bf);
    for (int n = 0; n < N; ++n) {
      const double *wr = &wd[(size_t)n * Kd];
      double acc = 0;
      for (int k = 0; k < Kd; ++k) acc += arow[k] * wr[k];
      ref[(size_t)m * N + n] = c.alpha * acc + (c.bias ? from_dt(b[n], bf) : 0.0);
    }
  }

  void *da, *dw, *ds, *dz, *db, *dd, *dws = nullptr;
  const int extra_rows = 3;
  CK(cudaMalloc(&da, a.size() * 2));
  CK(cudaMalloc(&dw, w.size() * 4));
  CK(cudaMalloc(&ds, s.size() * 2));
  CK(cudaMalloc(&dz, z.size() * 2));
  CK(cudaMalloc(&db, b.size() * 2));
  CK(cudaMalloc(&dd, (size_t)(M + extra_rows) * ldd * 2));
  const size_t wsb = c.split > 1 ? (size_t)c.split * M * N * 4 : 0;
  if (wsb) CK(cudaMalloc(&dws, wsb));
  CK(cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, w.data(), w.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(ds, s.data(), s.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dz, z.data(), z.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemset(dd, 0xFF, (size_t)(M + extra_rows) * ldd * 2));

  w4a16_launch_params p = {};
  p.a = da;
  p.w = dw;
  p.scales = ds;
  p.zeros = kk.mode == 2 ? dz : nullptr;
  p.bias = c.bias ? db : nullptr;
  p.d = dd;
  p.workspace = dws;
  p.workspace_bytes = wsb;
  p.lda = lda;
  p.ldd = ldd;
  p.m = M;
  p.n = N;
  p.k = Kd;
  p.group_size = c.group;
  p.alpha = c.alpha;
  p.sm_count = c.sms;
  p.split_k = c.split;
  int rc = kk.launch(&p, nullptr);
  cudaError_t se = cudaDeviceSynchronize();
  if (rc != 0 || se != cudaSuccess) {
    printf("FAIL %s M=%d N=%d K=%d g=%d split=%d sms=%d: launch rc=%d (%s) sync=%s\n", kk.name, M, N, Kd, c.group,
           c.split, c.sms, rc, cudaGetErrorString((cudaError_t)rc), cudaGetErrorString(se));
    exit(3);
  }
  std::vector<uint16_t> d((size_t)(M + extra_rows) * ldd);
  CK(cudaMemcpy(d.data(), dd, d.size() * 2, cudaMemcpyDeviceToHost));
  double num = 0, den = 0, maxe = 0;
  int nan = 0, oob = 0;
  for (int m = 0; m < M + extra_rows; ++m)
    for (int n = 0; n < ldd; ++n) {
      const uint16_t v = d[(size_t)m * ldd + n];
      if (m >= M || n >= N) {
        if (v != 0xFFFF) ++oob;
        continue;
      }
      const double x = from_dt(v, bf), r = ref[(size_t)m * N + n];
      if (!std::isfinite(x)) {
        ++nan;
        continue;
      }
      num += (x - r) * (x - r);
      den += r * r;
      maxe = std::max(maxe, std::fabs(x - r));
    }
  const double rel = std::sqrt(num / std::max(den, 1e-300));
  const double tol = bf ? 1e-2 : 2e-3;
  const bool ok = nan == 0 && oob == 0 && rel < tol;
  if (!ok || verbose)
    printf("%s %s M=%d N=%d K=%d g=%d split=%d sms=%d bias=%d alpha=%g lda=%lld ldd=%lld: rel=%.3g max=%.3g nan=%d oob=%d\n",
           ok ? "ok  " : "FAIL", kk.name, M, N, Kd, c.group, c.split, c.sms, c.bias, c.alpha, (long long)lda,
           (long long)ldd, rel, maxe, nan, oob);
  cudaFree(da);
  cudaFree(dw);
  cudaFree(ds);
  cudaFree(dz);
  cudaFree(db);
  cudaFree(dd);
  if (dws) cudaFree(dws);
  return ok ? 0 : 1;
}

static int cmd_test(const char *pat, bool quick) {
  std::vector<const KInfo *> ks;
  find_kernels(pat, ks);
  int fails = 0, runs = 0;
  std::mt19937 rng(12345);
  for (const KInfo *kp : ks) {
    const KInfo &k = *kp;
    const int N = std::max(256, 2 * k.tn * k.cn);
    std::vector<Case> cases;
    const int Ms[] = {1, 3, 17, 127, 1000};
    std::vector<int> groups;
    if (k.mode == 0) {
      groups = {0};
    } else {
      groups = {32, 64, 128, 256};
    }
    for (int M : Ms)
      for (int g : groups) {
        if (quick && M != 17 && M != 1000) continue;
        Case c = {M, N, 512, g == 0 ? 512 : g, 1, 132, false, 1.f, 0, 0};
        if (M == 1000) c.k = 256, c.group = g == 0 ? 256 : std::min(g, 256);
        cases.push_back(c);
      }
    // bias + alpha + padded strides, split-K, few SMs (several tiles per CTA: persistence, pingpong)
    cases.push_back({17, N, 512, k.mode == 0 ? 512 : 128, 1, 132, true, 0.5f, 8, 8});
    cases.push_back({127, N, 1024, k.mode == 0 ? 1024 : 64, 2, 132, true, 1.25f, 0, 0});
    cases.push_back({300, N, 512, k.mode == 0 ? 512 : 128, 1, 2 * k.cn * k.cm, true, 1.f, 0, 0});
    cases.push_back({65, 2 * N, 512, k.mode == 0 ? 512 : 128, 4, 3 * k.cn * k.cm, false, 1.f, 0, 24});
    if (quick) cases.resize(std::min<size_t>(cases.size(), 4));
    int kf = 0;
    for (const Case &c : cases) {
      kf += run_case(k, c, rng, false);
      ++runs;
    }
    printf("%s %s: %zu cases, %d failed\n", kf ? "FAIL" : "PASS", k.name, cases.size(), kf);
    fails += kf;
  }
  printf("test: %d kernels, %d runs, %d failed\n", (int)ks.size(), runs, fails);
  return fails ? 1 : 0;
}

// ------------------------------------------------------------------------------ bench
__global__ void fill_rand(uint32_t *p, size_t n, uint32_t seed, uint32_t mask, uint32_t orv) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t x = (uint32_t)i * 2654435761u ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    x *= 3266489917u;
    x ^= x >> 16;
    p[i] = (x & mask) | orv;
  }
}
static void frand(void *p, size_t bytes, uint32_t seed, uint32_t mask = 0xFFFFFFFFu, uint32_t orv = 0) {
  fill_rand<<<1024, 256>>>((uint32_t *)p, bytes / 4, seed, mask, orv);
}

// median of 5 samples, each the mean over `iters` back-to-back launches in a graph
template <class F> static double time_ms(F &&launch, int iters) {
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (int i = 0; i < 2; ++i) launch(st, i);
  CK(cudaStreamSynchronize(st));
  cudaGraph_t graph;
  cudaGraphExec_t exec = nullptr;
  bool use_graph = cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
  if (use_graph) {
    for (int i = 0; i < iters; ++i) launch(st, i);
    if (cudaStreamEndCapture(st, &graph) != cudaSuccess ||
        cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
      use_graph = false;
      cudaGetLastError();
    }
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> v;
  for (int r = 0; r < 5; ++r) {
    CK(cudaEventRecord(e0, st));
    if (use_graph)
      CK(cudaGraphLaunch(exec, st));
    else
      for (int i = 0; i < iters; ++i) launch(st, i);
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    v.push_back(ms / iters);
  }
  CK(cudaGetLastError());
  if (exec) cudaGraphExecDestroy(exec);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(st);
  std::sort(v.begin(), v.end());
  return v[2];
}

static int cmd_bench(const char *pat, const char *mlist, const char *layer_sel) {
  std::vector<const KInfo *> ks;
  find_kernels(pat, ks);
  std::vector<int> Ms;
  for (const char *p = mlist; *p;) {
    Ms.push_back(atoi(p));
    while (*p && *p != ',') ++p;
    if (*p) ++p;
  }
  const int layers[8][2] = {{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336},
                            {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}};
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  printf("device %s, %d SMs, L2 %d MB\n", prop.name, sms, prop.l2CacheSize >> 20);
  cublasHandle_t cb;
  cublasCreate(&cb);
  const int group = 128;
  printf("%-6s %-6s %-6s | %-58s %5s %9s %8s %7s %6s | %9s %7s\n", "M", "N", "K", "best sm90 kernel", "split",
         "ms", "TFLOP/s", "GB/s", "floor%", "cublas_ms", "speedup");
  for (int li = 0; li < 8; ++li) {
    if (layer_sel && !strchr(layer_sel, '0' + li)) continue;
    const int N = layers[li][0], Kd = layers[li][1];
    const size_t wbytes = (size_t)N * Kd / 2;
    const int copies = (int)std::max<size_t>(1, (size_t)(256u << 20) / wbytes);
    const int Mmax = *std::max_element(Ms.begin(), Ms.end());
    std::vector<void *> W(copies);
    for (int i = 0; i < copies; ++i) {
      CK(cudaMalloc(&W[i], wbytes));
      frand(W[i], wbytes, 17 + i);
    }
    void *A, *S, *D, *WS, *Wb;
    const size_t wsb = (size_t)16 * Mmax * N * 4;
    CK(cudaMalloc(&A, (size_t)Mmax * Kd * 2));
    CK(cudaMalloc(&S, (size_t)(Kd / group) * N * 2));
    CK(cudaMalloc(&D, (size_t)Mmax * N * 2));
    CK(cudaMalloc(&WS, std::min<size_t>(wsb, (size_t)1 << 30)));
    CK(cudaMalloc(&Wb, (size_t)N * Kd * 2));
    // bf16 values in [1,2) with random sign: 0x3F80 | mantissa bits; scales ~ 2^-6
    frand(A, (size_t)Mmax * Kd * 2, 3, 0x807F807Fu, 0x3F803F80u);
    frand(S, (size_t)(Kd / group) * N * 2, 5, 0x007F007Fu, 0x3C803C80u);
    frand(Wb, (size_t)N * Kd * 2, 7, 0x807F807Fu, 0x3F803F80u);
    CK(cudaDeviceSynchronize());
    for (int M : Ms) {
      // cuBLAS bf16: D[M,N] = A[M,K] W[N,K]^T  (column-major: D^T = W A^T)
      const float one = 1.f, zero = 0.f;
      auto cub = [&](cudaStream_t st, int) {
        cublasSetStream(cb, st);
        cublasGemmEx(cb, CUBLAS_OP_T, CUBLAS_OP_N, N, M, Kd, &one, Wb, CUDA_R_16BF, Kd, A, CUDA_R_16BF, Kd, &zero, D,
                     CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      };
      const double flops = 2.0 * M * N * (double)Kd;
      const int iters = std::max(3, std::min(50, (int)(2e9 / std::max(flops, 1.0) * 10)));
      const double tc = time_ms(cub, iters);
      const double bytes = wbytes + (double)(Kd / group) * N * 2 + (double)M * Kd * 2 + (double)M * N * 2;
      const double floor_ms = std::max(bytes / 3.1e9, flops / 800e9);
      double best = 1e30;
      const KInfo *bk = nullptr;
      int bsplit = 1;
      for (const KInfo *kp : ks) {
        const KInfo &k = *kp;
        if (!k.bf16 || k.mode != 1) continue;
        if (N % (k.tn * k.cn) || Kd % k.tk) continue;
        const long long tiles = (long long)(N / (k.tn * k.cn)) * ((M + k.tm * k.cm - 1) / (k.tm * k.cm));
        const int kbs = Kd / k.tk;
        for (int split = 1; split <= 16; ++split) {
          if (kbs % split) continue;
          if (split > 1 && tiles * split > 2LL * sms / (k.cn * k.cm)) break;
          if ((size_t)split * M * N * 4 > std::min<size_t>(wsb, (size_t)1 << 30)) break;
          w4a16_launch_params p = {};
          p.a = A;
          p.scales = S;
          p.d = D;
          p.workspace = WS;
          p.workspace_bytes = wsb;
          p.lda = Kd;
          p.ldd = N;
          p.m = M;
          p.n = N;
          p.k = Kd;
          p.group_size = group;
          p.alpha = 1.f;
          p.sm_count = sms;
          p.split_k = split;
          int err = 0;
          auto run = [&](cudaStream_t st, int i) {
            p.w = W[i % copies];
            int rc = k.launch(&p, st);
            if (rc) err = rc;
          };
          const double t = time_ms(run, iters);
          if (err) {
            printf("  %s split %d: launch error %d\n", k.name, split, err);
            continue;
          }
          if (getenv("BENCH_ALL"))
            printf("  %-58s M=%d N=%d K=%d split=%d %.4f ms\n", k.name, M, N, Kd, split, t);
          if (t < best) best = t, bk = &k, bsplit = split;
        }
      }
      if (!bk) continue;
      printf("%-6d %-6d %-6d | %-58s %5d %9.4f %8.1f %7.0f %6.1f | %9.4f %7.2f\n", M, N, Kd, bk->name, bsplit, best,
             flops / best / 1e9, bytes / best / 1e6, 100.0 * floor_ms / best, tc, tc / best);
      fflush(stdout);
    }
    for (void *w : W) cudaFree(w);
    cudaFree(A);
    cudaFree(S);
    cudaFree(D);
    cudaFree(WS);
    cudaFree(Wb);
  }
  cublasDestroy(cb);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s list | test PATTERN [quick] | bench PATTERN [M,...] [layers]\n", argv[0]);
    return 1;
  }
  if (!strcmp(argv[1], "list")) {
    for (const KInfo &k : kKernels) printf("%s stages=%d smem=%d\n", k.name, k.stages, k.smem);
    return 0;
  }
  if (!strcmp(argv[1], "names")) {
    std::vector<const KInfo *> v;
    find_kernels(argc > 2 ? argv[2] : "all", v);
    for (const KInfo *k : v) printf("%s\n", k->name);
    return 0;
  }
  if (!strcmp(argv[1], "test")) return cmd_test(argc > 2 ? argv[2] : "*", argc > 3 && !strcmp(argv[3], "quick"));
  if (!strcmp(argv[1], "bench"))
    return cmd_bench(argc > 2 ? argv[2] : "*", argc > 3 ? argv[3] : "1,16,64,256,1024,4096",
                     argc > 4 ? argv[4] : nullptr);
  return 1;
}

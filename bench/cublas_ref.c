/* cublas_ref.c - cuBLASLt dense reference for the bench (see cublas_ref.h). */
#include "cublas_ref.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORKSPACE_BYTES ((size_t)32 << 20) /* what NVIDIA recommends for Hopper */
#define MAX_ALGOS BENCH_CUBLAS_MAX_ALGOS

struct bench_cublas {
  cublasLtHandle_t lt;
  void *workspace;
};

int bench_cublas_create(bench_cublas **out, char *msg, size_t cap) {
  *out = NULL;
  bench_cublas *cb = calloc(1, sizeof *cb);
  if (!cb) {
    snprintf(msg, cap, "host allocation failed");
    return -1;
  }
  cublasStatus_t s = cublasLtCreate(&cb->lt);
  if (s != CUBLAS_STATUS_SUCCESS) {
    snprintf(msg, cap, "cublasLtCreate failed: %s", cublasLtGetStatusString(s));
    free(cb);
    return -1;
  }
  cudaError_t e = cudaMalloc(&cb->workspace, WORKSPACE_BYTES);
  if (e != cudaSuccess) {
    snprintf(msg, cap, "cudaMalloc of the cuBLASLt workspace failed: %s", cudaGetErrorString(e));
    cublasLtDestroy(cb->lt);
    free(cb);
    return -1;
  }
  *out = cb;
  return 0;
}

void bench_cublas_destroy(bench_cublas *cb) {
  if (!cb) return;
  cudaFree(cb->workspace);
  cublasLtDestroy(cb->lt);
  free(cb);
}

/* one algorithm's launch */
typedef struct ctx {
  bench_cublas_set *set;
  const cublasLtMatmulAlgo_t *algo;
} ctx;

struct bench_cublas_set {
  bench_cublas *cb;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t lw, la, ld;
  cublasLtMatmulHeuristicResult_t heur[MAX_ALGOS];
  int index[MAX_ALGOS]; /* candidate j is heur[index[j]] */
  ctx ctxs[MAX_ALGOS];
  int usable;
  char *w; /* copies x w_bytes */
  size_t w_bytes;
  int copies;
  void *a, *d;
};

static w4a16_status launch(void *vctx, int copy, void *stream, char *msg, size_t cap) {
  const ctx *c = vctx;
  const bench_cublas_set *set = c->set;
  const float alpha = 1.f, beta = 0.f;
  /* column-major view: D^T[N,M] = (W^T)^T[N,K] . A^T[K,M] */
  cublasStatus_t s = cublasLtMatmul(set->cb->lt, set->op, &alpha, set->w + (size_t)copy * set->w_bytes, set->lw,
                                    set->a, set->la, &beta, set->d, set->ld, set->d, set->ld, c->algo,
                                    set->cb->workspace, WORKSPACE_BYTES, (cudaStream_t)stream);
  if (s != CUBLAS_STATUS_SUCCESS) {
    snprintf(msg, cap, "cublasLtMatmul: %s", cublasLtGetStatusString(s));
    return W4A16_STATUS_CUDA_ERROR;
  }
  return W4A16_STATUS_OK;
}

static w4a16_status fail(bench_cublas_result *res, w4a16_status st, const char *what, const char *why) {
  res->timing.status = st;
  snprintf(res->timing.message, sizeof res->timing.message, "%s: %s", what, why);
  return st;
}

void bench_cublas_release(bench_cublas_set *set, void *stream) {
  if (!set) return;
  if (set->w) {
    cudaStreamSynchronize((cudaStream_t)stream);
    cudaFree(set->w);
  }
  if (set->ld) cublasLtMatrixLayoutDestroy(set->ld);
  if (set->la) cublasLtMatrixLayoutDestroy(set->la);
  if (set->lw) cublasLtMatrixLayoutDestroy(set->lw);
  if (set->op) cublasLtMatmulDescDestroy(set->op);
  free(set);
}

w4a16_status bench_cublas_prepare(bench_cublas *cb, const w4a16_problem *p, void *a, void *d, int max_algos,
                                  size_t rotate_min_bytes, uint64_t seed, bench_cublas_set **out,
                                  bench_cublas_result *res) {
  memset(res, 0, sizeof *res);
  res->algo = -1;
  *out = NULL;
  if (max_algos < 1) max_algos = 1;
  if (max_algos > MAX_ALGOS) max_algos = MAX_ALGOS;
  bench_cublas_set *set = calloc(1, sizeof *set);
  if (!set) return fail(res, W4A16_STATUS_OUT_OF_MEMORY, "cuBLASLt", "host allocation failed");
  const cudaDataType_t dt = p->dtype == W4A16_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
  const uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;
  const int64_t lda = p->lda ? p->lda : p->k, ldd = p->ldd ? p->ldd : p->n;
  set->cb = cb;
  set->a = a;
  set->d = d;
  w4a16_status st = W4A16_STATUS_OK;
  cublasLtMatmulPreference_t pref = NULL;
  cublasStatus_t s;
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  if ((s = cublasLtMatmulDescCreate(&set->op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) != CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatmulDescSetAttribute(set->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) !=
          CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatmulDescSetAttribute(set->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)) !=
          CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatrixLayoutCreate(&set->lw, dt, k, n, (int64_t)k)) != CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatrixLayoutCreate(&set->la, dt, k, m, lda)) != CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatrixLayoutCreate(&set->ld, dt, n, m, ldd)) != CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatmulPreferenceCreate(&pref)) != CUBLAS_STATUS_SUCCESS) {
    st = fail(res, W4A16_STATUS_CUDA_ERROR, "cuBLASLt descriptors", cublasLtGetStatusString(s));
    goto done;
  }
  uint64_t ws = WORKSPACE_BYTES;
  if ((s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) !=
      CUBLAS_STATUS_SUCCESS) {
    st = fail(res, W4A16_STATUS_CUDA_ERROR, "cuBLASLt preference", cublasLtGetStatusString(s));
    goto done;
  }
  int found = 0;
  s = cublasLtMatmulAlgoGetHeuristic(cb->lt, set->op, set->lw, set->la, set->ld, set->ld, pref, max_algos, set->heur,
                                     &found);
  if (s != CUBLAS_STATUS_SUCCESS || found < 1) {
    st = fail(res, W4A16_STATUS_NOT_SUPPORTED, "cublasLtMatmulAlgoGetHeuristic",
              s != CUBLAS_STATUS_SUCCESS ? cublasLtGetStatusString(s) : "no algorithm");
    goto done;
  }
  for (int i = 0; i < found && i < max_algos; ++i) {
    if (set->heur[i].state != CUBLAS_STATUS_SUCCESS || set->heur[i].workspaceSize > WORKSPACE_BYTES) continue;
    set->index[set->usable] = i;
    set->ctxs[set->usable] = (ctx){set, &set->heur[i].algo};
    ++set->usable;
  }
  if (set->usable == 0) {
    st = fail(res, W4A16_STATUS_NOT_SUPPORTED, "cuBLASLt", "no usable algorithm");
    goto done;
  }

  /* rotating dense weight copies */
  set->w_bytes = ((size_t)(n * k * 2) + 255) & ~(size_t)255;
  size_t free_b = 0, total_b = 0;
  cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
  if (e != cudaSuccess) {
    st = fail(res, W4A16_STATUS_CUDA_ERROR, "cudaMemGetInfo", cudaGetErrorString(e));
    goto done;
  }
  int copies = w4a16_timing_copies(set->w_bytes, rotate_min_bytes, free_b / 2);
  for (;;) {
    e = cudaMalloc((void **)&set->w, (size_t)copies * set->w_bytes);
    if (e == cudaSuccess) break;
    cudaGetLastError();
    set->w = NULL;
    if (copies == 1) {
      st = fail(res, W4A16_STATUS_OUT_OF_MEMORY, "cudaMalloc of the dense weights", cudaGetErrorString(e));
      goto done;
    }
    copies = (copies + 1) / 2;
  }
  set->copies = res->copies = copies;
  if ((st = w4a16_timing_fill_uniform(set->w, (size_t)(n * k), p->dtype, -0.1f, 0.1f, seed)) != W4A16_STATUS_OK) {
    fail(res, st, "filling the dense weights", w4a16_last_error_message());
    goto done;
  }
  for (int i = 1; i < copies; ++i) {
    if ((e = cudaMemcpy(set->w + (size_t)i * set->w_bytes, set->w, set->w_bytes, cudaMemcpyDeviceToDevice)) !=
        cudaSuccess) {
      st = fail(res, W4A16_STATUS_CUDA_ERROR, "cudaMemcpy (dense weight copies)", cudaGetErrorString(e));
      goto done;
    }
  }
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
    st = fail(res, W4A16_STATUS_CUDA_ERROR, "cudaDeviceSynchronize", cudaGetErrorString(e));
    goto done;
  }

done:
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (st != W4A16_STATUS_OK) {
    bench_cublas_release(set, NULL);
    return st;
  }
  *out = set;
  return W4A16_STATUS_OK;
}

int bench_cublas_candidates(const bench_cublas_set *set, w4a16_timing_candidate *out, int cap) {
  int k = 0;
  for (; k < set->usable && k < cap; ++k)
    out[k] = (w4a16_timing_candidate){launch, (void *)&set->ctxs[k], set->copies, 1};
  return k;
}

void bench_cublas_pick(const bench_cublas_set *set, const w4a16_timing_result *r, int n, bench_cublas_result *res) {
  const int copies = res->copies;
  memset(res, 0, sizeof *res);
  res->algo = -1;
  res->copies = copies;
  res->algos_tried = n;
  const w4a16_timing_result *first_fail = NULL;
  for (int j = 0; j < n; ++j) {
    if (r[j].status == W4A16_STATUS_OK) {
      if (res->algo < 0 || r[j].median_us < res->timing.median_us) {
        res->timing = r[j];
        res->algo = set->index[j];
      }
    } else if (!first_fail) {
      first_fail = &r[j];
    }
  }
  if (res->algo < 0) {
    if (first_fail)
      res->timing = *first_fail;
    else
      fail(res, W4A16_STATUS_NOT_SUPPORTED, "cuBLASLt", "no usable algorithm");
  }
}

w4a16_status bench_cublas_time(bench_cublas *cb, const w4a16_problem *p, void *a, void *d, void *stream,
                               int max_algos, size_t rotate_min_bytes, uint64_t seed,
                               const w4a16_timing_options *to, bench_cublas_result *res) {
  bench_cublas_set *set = NULL;
  w4a16_status st = bench_cublas_prepare(cb, p, a, d, max_algos, rotate_min_bytes, seed, &set, res);
  if (st != W4A16_STATUS_OK) return st;
  /* time the heuristic's candidates one after the other, keep the fastest */
  w4a16_timing_options o = to ? *to : (w4a16_timing_options){0, 0, 0, 0, 0, 0};
  o.relaxed_capture = 1; /* cuBLASLt's own host calls during capture are its business */
  w4a16_timing_candidate cand[MAX_ALGOS];
  w4a16_timing_result tr[MAX_ALGOS];
  const int nc = bench_cublas_candidates(set, cand, MAX_ALGOS);
  for (int j = 0; j < nc; ++j) w4a16_time_launch(cand[j].fn, cand[j].ctx, cand[j].copies, stream, &o, &tr[j]);
  bench_cublas_pick(set, tr, nc, res);
  bench_cublas_release(set, stream);
  return res->timing.status;
}

/* cublas_ref.c - cuBLASLt dense reference for the bench (see cublas_ref.h). */
#include "cublas_ref.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORKSPACE_BYTES ((size_t)32 << 20) /* what NVIDIA recommends for Hopper */
#define MAX_ALGOS 16

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

typedef struct ctx {
  bench_cublas *cb;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t lw, la, ld;
  const cublasLtMatmulAlgo_t *algo;
  char *w; /* copies x w_bytes */
  size_t w_bytes;
  void *a, *d;
} ctx;

static w4a16_status launch(void *vctx, int copy, void *stream, char *msg, size_t cap) {
  ctx *c = vctx;
  const float alpha = 1.f, beta = 0.f;
  /* column-major view: D^T[N,M] = (W^T)^T[N,K] . A^T[K,M] */
  cublasStatus_t s = cublasLtMatmul(c->cb->lt, c->op, &alpha, c->w + (size_t)copy * c->w_bytes, c->lw, c->a, c->la,
                                    &beta, c->d, c->ld, c->d, c->ld, c->algo, c->cb->workspace, WORKSPACE_BYTES,
                                    (cudaStream_t)stream);
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

w4a16_status bench_cublas_time(bench_cublas *cb, const w4a16_problem *p, void *a, void *d, void *stream,
                               int max_algos, size_t rotate_min_bytes, uint64_t seed,
                               const w4a16_timing_options *to, bench_cublas_result *res) {
  memset(res, 0, sizeof *res);
  res->algo = -1;
  if (max_algos < 1) max_algos = 1;
  if (max_algos > MAX_ALGOS) max_algos = MAX_ALGOS;
  const cudaDataType_t dt = p->dtype == W4A16_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
  const uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;
  const int64_t lda = p->lda ? p->lda : p->k, ldd = p->ldd ? p->ldd : p->n;
  ctx c;
  memset(&c, 0, sizeof c);
  c.cb = cb;
  c.a = a;
  c.d = d;
  w4a16_status st = W4A16_STATUS_OK;
  cublasLtMatmulPreference_t pref = NULL;
  cublasStatus_t s;

  /* descriptors */
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  if ((s = cublasLtMatmulDescCreate(&c.op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) != CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) !=
          CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)) !=
          CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatrixLayoutCreate(&c.lw, dt, k, n, (int64_t)k)) != CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatrixLayoutCreate(&c.la, dt, k, m, lda)) != CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatrixLayoutCreate(&c.ld, dt, n, m, ldd)) != CUBLAS_STATUS_SUCCESS ||
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
  cublasLtMatmulHeuristicResult_t heur[MAX_ALGOS];
  int found = 0;
  s = cublasLtMatmulAlgoGetHeuristic(cb->lt, c.op, c.lw, c.la, c.ld, c.ld, pref, max_algos, heur, &found);
  if (s != CUBLAS_STATUS_SUCCESS || found < 1) {
    st = fail(res, W4A16_STATUS_NOT_SUPPORTED, "cublasLtMatmulAlgoGetHeuristic",
              s != CUBLAS_STATUS_SUCCESS ? cublasLtGetStatusString(s) : "no algorithm");
    goto done;
  }

  /* rotating dense weight copies */
  c.w_bytes = ((size_t)(n * k * 2) + 255) & ~(size_t)255;
  size_t free_b = 0, total_b = 0;
  cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
  if (e != cudaSuccess) {
    st = fail(res, W4A16_STATUS_CUDA_ERROR, "cudaMemGetInfo", cudaGetErrorString(e));
    goto done;
  }
  int copies = w4a16_timing_copies(c.w_bytes, rotate_min_bytes, free_b / 2);
  for (;;) {
    e = cudaMalloc((void **)&c.w, (size_t)copies * c.w_bytes);
    if (e == cudaSuccess) break;
    cudaGetLastError();
    c.w = NULL;
    if (copies == 1) {
      st = fail(res, W4A16_STATUS_OUT_OF_MEMORY, "cudaMalloc of the dense weights", cudaGetErrorString(e));
      goto done;
    }
    copies = (copies + 1) / 2;
  }
  res->copies = copies;
  if ((st = w4a16_timing_fill_uniform(c.w, (size_t)(n * k), p->dtype, -0.1f, 0.1f, seed)) != W4A16_STATUS_OK) {
    fail(res, st, "filling the dense weights", w4a16_last_error_message());
    goto done;
  }
  for (int i = 1; i < copies; ++i) {
    if ((e = cudaMemcpy(c.w + (size_t)i * c.w_bytes, c.w, c.w_bytes, cudaMemcpyDeviceToDevice)) != cudaSuccess) {
      st = fail(res, W4A16_STATUS_CUDA_ERROR, "cudaMemcpy (dense weight copies)", cudaGetErrorString(e));
      goto done;
    }
  }
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
    st = fail(res, W4A16_STATUS_CUDA_ERROR, "cudaDeviceSynchronize", cudaGetErrorString(e));
    goto done;
  }

  /* time the heuristic's candidates, keep the fastest */
  w4a16_timing_options o = to ? *to : (w4a16_timing_options){0, 0, 0, 0, 0};
  o.relaxed_capture = 1; /* cuBLASLt's own host calls during capture are its business */
  w4a16_timing_result first_fail;
  memset(&first_fail, 0, sizeof first_fail);
  int tried = 0;
  for (int i = 0; i < found && i < max_algos; ++i) {
    if (heur[i].state != CUBLAS_STATUS_SUCCESS || heur[i].workspaceSize > WORKSPACE_BYTES) continue;
    c.algo = &heur[i].algo;
    w4a16_timing_result tr;
    w4a16_time_launch(launch, &c, copies, stream, &o, &tr);
    ++tried;
    if (tr.status == W4A16_STATUS_OK) {
      if (res->algo < 0 || tr.median_us < res->timing.median_us) {
        res->timing = tr;
        res->algo = i;
      }
    } else if (first_fail.status == W4A16_STATUS_OK) {
      first_fail = tr;
    }
  }
  res->algos_tried = tried;
  if (res->algo < 0) {
    if (first_fail.status != W4A16_STATUS_OK) {
      res->timing = first_fail;
    } else {
      fail(res, W4A16_STATUS_NOT_SUPPORTED, "cuBLASLt", "no usable algorithm");
    }
    st = res->timing.status;
  } else {
    st = W4A16_STATUS_OK;
  }

done:
  if (c.w) {
    cudaStreamSynchronize((cudaStream_t)stream);
    cudaFree(c.w);
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (c.ld) cublasLtMatrixLayoutDestroy(c.ld);
  if (c.la) cublasLtMatrixLayoutDestroy(c.la);
  if (c.lw) cublasLtMatrixLayoutDestroy(c.lw);
  if (c.op) cublasLtMatmulDescDestroy(c.op);
  return st;
}

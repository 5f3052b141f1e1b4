/* timing.c - the timing method shared by the profiler and the benchmark harness (see timing.h). */
#include "timing.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DEFAULT_WARMUP 5
#define DEFAULT_SAMPLES 10
#define MAX_SAMPLES 1000
#define DEFAULT_REPLAY_US 1000.0
#define DEFAULT_MAX_LAUNCHES 1000
#define ROUND256(x) (((x) + 255) & ~(size_t)255)

/* ------------------------------------------------------------------------- */
/* The timer                                                                 */
/* ------------------------------------------------------------------------- */

static w4a16_status set_result(w4a16_timing_result *res, w4a16_status st, const char *fmt, ...)
    W4A16_PRINTF(3, 4);

static w4a16_status set_result(w4a16_timing_result *res, w4a16_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->message, sizeof res->message, fmt, ap);
  va_end(ap);
  res->status = st;
  return st;
}

static w4a16_status cuda_result(w4a16_timing_result *res, cudaError_t e, const char *what) {
  return set_result(res, W4A16_STATUS_CUDA_ERROR, "%s: %s (CUDA error %d)", what, cudaGetErrorString(e),
                    (int)e);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

w4a16_status w4a16_time_launch(w4a16_timing_launch_fn fn, void *ctx, int copies, void *stream_v,
                               const w4a16_timing_options *options, w4a16_timing_result *res) {
  memset(res, 0, sizeof *res);
  if (!fn) return set_result(res, W4A16_STATUS_NULL_POINTER, "no launch function");
  w4a16_timing_options o = {0, 0, 0, 0, 0};
  if (options) o = *options;
  if (o.warmup <= 0) o.warmup = DEFAULT_WARMUP;
  if (o.samples <= 0) o.samples = DEFAULT_SAMPLES;
  if (o.samples > MAX_SAMPLES) o.samples = MAX_SAMPLES;
  if (!(o.replay_target_us > 0)) o.replay_target_us = DEFAULT_REPLAY_US;
  if (o.max_launches <= 0) o.max_launches = DEFAULT_MAX_LAUNCHES;
  if (copies < 1) copies = 1;
  res->copies = copies;
  cudaStream_t stream = (cudaStream_t)stream_v;
  char msg[256] = "";

  /* everything the timed region uses is made here */
  const int nev = o.samples + 1;
  cudaEvent_t *ev = calloc((size_t)nev, sizeof *ev);
  double *samp = calloc((size_t)o.samples, sizeof *samp);
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  cudaError_t e;
  int made = 0;
  if (!ev || !samp) {
    set_result(res, W4A16_STATUS_OUT_OF_MEMORY, "host allocation of %d samples failed", o.samples);
    goto done;
  }
  cudaGetLastError(); /* a leftover non-sticky error is not this candidate's */
  for (; made < nev; ++made) {
    if ((e = cudaEventCreate(&ev[made])) != cudaSuccess) {
      cuda_result(res, e, "cudaEventCreate");
      goto done;
    }
  }

  /* 1. one checked launch */
  w4a16_status st = fn(ctx, 0, stream, msg, sizeof msg);
  if (st != W4A16_STATUS_OK) {
    set_result(res, st, "launch failed: %s", msg[0] ? msg : w4a16_status_string(st));
    goto done;
  }
  if ((e = cudaStreamSynchronize(stream)) != cudaSuccess || (e = cudaGetLastError()) != cudaSuccess) {
    cuda_result(res, e, "the launched kernel failed");
    goto done;
  }

  /* 2. warm-up over the rotating copies; its duration estimates one launch */
  if ((e = cudaEventRecord(ev[0], stream)) != cudaSuccess) {
    cuda_result(res, e, "cudaEventRecord");
    goto done;
  }
  for (int i = 1; i <= o.warmup; ++i) {
    st = fn(ctx, i % copies, stream, msg, sizeof msg);
    if (st != W4A16_STATUS_OK) {
      set_result(res, st, "warm-up launch %d failed: %s", i, msg[0] ? msg : w4a16_status_string(st));
      goto done;
    }
  }
  float ms = 0.f;
  if ((e = cudaEventRecord(ev[1], stream)) != cudaSuccess || (e = cudaEventSynchronize(ev[1])) != cudaSuccess ||
      (e = cudaEventElapsedTime(&ms, ev[0], ev[1])) != cudaSuccess) {
    cuda_result(res, e, "warm-up");
    goto done;
  }
  double est_us = (double)ms * 1000.0 / o.warmup;
  if (!(est_us > 0.1)) est_us = 0.1;

  /* 3. capture L launches over the copies in one graph */
  double want = ceil(o.replay_target_us / est_us);
  int launches = want > (double)o.max_launches ? o.max_launches : (int)want;
  if (launches < 2) launches = 2;
  /* a whole number of rounds over the copies, so that the rotation holds across replays too (with
     launches % copies = r > 0 a replay's first r launches would reread the copies its previous
     replay's last r launches read, from L2 where a copy fits); rounded down where rounding up
     would pass max_launches and a round remains */
  const int rounds_up = (launches + copies - 1) / copies, rounds_down = launches / copies;
  launches = rounds_up * copies;
  if (launches > o.max_launches && rounds_down >= 1) launches = rounds_down * copies;
  res->launches = launches;
  if ((e = cudaStreamBeginCapture(
           stream, o.relaxed_capture ? cudaStreamCaptureModeRelaxed : cudaStreamCaptureModeThreadLocal)) != cudaSuccess) {
    cuda_result(res, e, "cudaStreamBeginCapture");
    goto done;
  }
  for (int i = 0; i < launches; ++i) {
    st = fn(ctx, i % copies, stream, msg, sizeof msg);
    if (st != W4A16_STATUS_OK) {
      cudaStreamEndCapture(stream, &graph);
      cudaGetLastError();
      set_result(res, st, "launch failed during graph capture: %s", msg[0] ? msg : w4a16_status_string(st));
      goto done;
    }
  }
  if ((e = cudaStreamEndCapture(stream, &graph)) != cudaSuccess) {
    cudaGetLastError();
    cuda_result(res, e, "the launch is not capturable in a CUDA graph (cudaStreamEndCapture)");
    goto done;
  }
  if ((e = cudaGraphInstantiate(&exec, graph, 0)) != cudaSuccess) {
    cudaGetLastError();
    cuda_result(res, e, "cudaGraphInstantiate");
    goto done;
  }
  /* one untimed replay (uploads the graph) */
  if ((e = cudaGraphLaunch(exec, stream)) != cudaSuccess || (e = cudaStreamSynchronize(stream)) != cudaSuccess) {
    cuda_result(res, e, "graph replay");
    goto done;
  }

  /* 4. timed region: back-to-back replays between events, no allocation, no host sync */
  e = cudaEventRecord(ev[0], stream);
  for (int s = 0; s < o.samples && e == cudaSuccess; ++s) {
    e = cudaGraphLaunch(exec, stream);
    if (e == cudaSuccess) e = cudaEventRecord(ev[s + 1], stream);
  }
  if (e != cudaSuccess || (e = cudaStreamSynchronize(stream)) != cudaSuccess) {
    cuda_result(res, e, "timed graph replays");
    goto done;
  }
  for (int s = 0; s < o.samples; ++s) {
    if ((e = cudaEventElapsedTime(&ms, ev[s], ev[s + 1])) != cudaSuccess) {
      cuda_result(res, e, "cudaEventElapsedTime");
      goto done;
    }
    samp[s] = (double)ms * 1000.0 / launches;
  }
  qsort(samp, (size_t)o.samples, sizeof *samp, cmp_double);
  res->samples = o.samples;
  res->min_us = samp[0];
  res->max_us = samp[o.samples - 1];
  res->median_us = (o.samples % 2) ? samp[o.samples / 2]
                                   : 0.5 * (samp[o.samples / 2 - 1] + samp[o.samples / 2]);
  res->status = W4A16_STATUS_OK;
  res->message[0] = '\0';

done:
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  for (int i = 0; i < made; ++i) cudaEventDestroy(ev[i]);
  free(ev);
  free(samp);
  return res->status;
}

/* ------------------------------------------------------------------------- */
/* Sizes, copies, random fills                                               */
/* ------------------------------------------------------------------------- */

size_t w4a16_timing_l2_bytes(void) {
  int dev = 0, l2 = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess ||
      l2 <= 0) {
    cudaGetLastError();
    return (size_t)50 << 20;
  }
  return (size_t)l2;
}

int w4a16_timing_copies(size_t copy_bytes, size_t rotate_min_bytes, size_t budget_bytes) {
  if (copy_bytes == 0) return 1;
  if (rotate_min_bytes == 0) rotate_min_bytes = 4 * w4a16_timing_l2_bytes();
  size_t c = (rotate_min_bytes + copy_bytes - 1) / copy_bytes;
  size_t cap = budget_bytes / copy_bytes;
  if (c > cap) c = cap; /* bounded by memory; at least one copy below */
  if (c > 100000) c = 100000;
  return c < 1 ? 1 : (int)c;
}

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

#define FILL_CHUNK ((size_t)8 << 20) /* bytes of host data generated, then repeated */

static w4a16_status copy_repeated(void *dev, size_t bytes, const void *host, size_t chunk) {
  for (size_t off = 0; off < bytes; off += chunk) {
    size_t n = bytes - off < chunk ? bytes - off : chunk;
    cudaError_t e = cudaMemcpy((char *)dev + off, host, n, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return w4a16_fail_cuda((int)e, "cudaMemcpy (random inputs)");
  }
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_timing_fill_bytes(void *dev, size_t bytes, uint64_t seed) {
  if (bytes == 0) return W4A16_STATUS_OK;
  size_t chunk = bytes < FILL_CHUNK ? bytes : FILL_CHUNK;
  unsigned char *h = malloc(chunk);
  if (!h) return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "host allocation of %zu bytes failed", chunk);
  uint64_t s = seed;
  for (size_t i = 0; i < chunk; i += 8) {
    uint64_t r = splitmix64(&s);
    size_t n = chunk - i < 8 ? chunk - i : 8;
    memcpy(h + i, &r, n);
  }
  w4a16_status st = copy_repeated(dev, bytes, h, chunk);
  free(h);
  return st;
}

w4a16_status w4a16_timing_fill_uniform(void *dev, size_t count, w4a16_dtype dtype, float lo, float hi,
                                       uint64_t seed) {
  if (count == 0) return W4A16_STATUS_OK;
  size_t chunk_elems = count < FILL_CHUNK / 2 ? count : FILL_CHUNK / 2;
  uint16_t *h = malloc(chunk_elems * sizeof *h);
  if (!h) return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "host allocation of %zu bytes failed", chunk_elems * 2);
  uint64_t s = seed;
  for (size_t i = 0; i < chunk_elems; ++i) {
    float u = (float)((splitmix64(&s) >> 40) * (1.0 / 16777216.0)); /* [0,1) */
    float v = lo + (hi - lo) * u;
    h[i] = dtype == W4A16_DTYPE_BF16 ? w4a16_float_to_bf16(v) : w4a16_float_to_half(v);
  }
  w4a16_status st = copy_repeated(dev, count * 2, h, chunk_elems * 2);
  free(h);
  return st;
}

static int64_t norm_group(const w4a16_problem *p) {
  if (p->mode == W4A16_PER_COLUMN_SCALE_ONLY || p->group_size <= 0) return p->k;
  return p->group_size;
}

double w4a16_timing_flops(const w4a16_problem *p) { return 2.0 * (double)p->m * (double)p->n * (double)p->k; }

double w4a16_timing_bytes(const w4a16_problem *p) {
  double g = (double)(p->k / norm_group(p));
  double b = (double)p->n * (double)p->k / 2.0;                            /* packed W */
  b += g * (double)p->n * 2.0 * (p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? 2 : 1); /* scales, zeros */
  b += (double)p->m * (double)p->k * 2.0 + (double)p->m * (double)p->n * 2.0;        /* A, D */
  if (p->has_bias) b += (double)p->n * 2.0;
  return b;
}

static size_t w_bytes(const w4a16_problem *p) { return ROUND256((size_t)p->n * (size_t)p->k / 2); }
static size_t s_bytes(const w4a16_problem *p) {
  return ROUND256((size_t)(p->k / norm_group(p)) * (size_t)p->n * 2);
}
static size_t z_bytes(const w4a16_problem *p) {
  return p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? s_bytes(p) : 0;
}

size_t w4a16_timing_copy_bytes(const w4a16_problem *p) { return w_bytes(p) + s_bytes(p) + z_bytes(p); }

/* ------------------------------------------------------------------------- */
/* Problem data                                                              */
/* ------------------------------------------------------------------------- */

struct w4a16_timing_data {
  w4a16_problem p;
  int copies;
  size_t copy_bytes;
  char *rot; /* copies x [W | scales | zeros] */
  void *a, *d, *bias;
  void *workspace;
  size_t workspace_bytes;
  cudaStream_t stream;
  int sm_count;
  const w4a16_kernel_desc *kernel; /* the one being timed */
};

void w4a16_timing_data_destroy(w4a16_timing_data *td) {
  if (!td) return;
  if (td->stream) cudaStreamSynchronize(td->stream);
  cudaFree(td->rot);
  cudaFree(td->a);
  cudaFree(td->d);
  cudaFree(td->bias);
  cudaFree(td->workspace);
  if (td->stream) cudaStreamDestroy(td->stream);
  free(td);
}

static w4a16_status dev_alloc(void **ptr, size_t bytes, const char *what) {
  *ptr = NULL;
  if (bytes == 0) return W4A16_STATUS_OK;
  cudaError_t e = cudaMalloc(ptr, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    *ptr = NULL;
    if (e == cudaErrorMemoryAllocation)
      return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "cudaMalloc of %zu bytes for %s failed", bytes, what);
    return w4a16_fail_cuda((int)e, "cudaMalloc");
  }
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_timing_data_create(const w4a16_problem *problem, size_t rotate_min_bytes, uint64_t seed,
                                      w4a16_timing_data **out) {
  if (!out) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "out is NULL");
  *out = NULL;
  w4a16_status st = w4a16_check_problem(problem);
  if (st != W4A16_STATUS_OK) return st;
  w4a16_device_info info;
  if ((st = w4a16_current_device(&info)) != W4A16_STATUS_OK) return st;

  w4a16_timing_data *td = calloc(1, sizeof *td);
  if (!td) return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "host allocation failed");
  td->p = *problem;
  if (!td->p.lda) td->p.lda = td->p.k;
  if (!td->p.ldd) td->p.ldd = td->p.n;
  td->p.group_size = (int)norm_group(&td->p);
  td->sm_count = info.sm_count;
  const w4a16_problem *p = &td->p;

  cudaError_t e = cudaStreamCreateWithFlags(&td->stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    td->stream = NULL;
    st = w4a16_fail_cuda((int)e, "cudaStreamCreateWithFlags");
    goto fail;
  }
  size_t a_bytes = (size_t)p->m * (size_t)p->lda * 2, d_bytes = (size_t)p->m * (size_t)p->ldd * 2;
  if ((st = dev_alloc(&td->a, a_bytes, "A")) != W4A16_STATUS_OK) goto fail;
  if ((st = dev_alloc(&td->d, d_bytes, "D")) != W4A16_STATUS_OK) goto fail;
  if (p->has_bias && (st = dev_alloc(&td->bias, (size_t)p->n * 2, "bias")) != W4A16_STATUS_OK) goto fail;

  /* rotating weight copies, bounded by half of the free memory */
  size_t free_b = 0, total_b = 0;
  if ((e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess) {
    st = w4a16_fail_cuda((int)e, "cudaMemGetInfo");
    goto fail;
  }
  td->copy_bytes = w4a16_timing_copy_bytes(p);
  td->copies = w4a16_timing_copies(td->copy_bytes, rotate_min_bytes, free_b / 2);
  for (;;) {
    st = dev_alloc((void **)&td->rot, (size_t)td->copies * td->copy_bytes, "rotating weight copies");
    if (st == W4A16_STATUS_OK || st != W4A16_STATUS_OUT_OF_MEMORY || td->copies == 1) break;
    td->copies = (td->copies + 1) / 2;
  }
  if (st != W4A16_STATUS_OK) goto fail;

  /* random inputs, never zeros: A, bias in [-1,1]; scales in [0.005,0.02]; zeros ~ -s*8 */
  const int64_t g = p->k / p->group_size;
  if ((st = w4a16_timing_fill_uniform(td->a, a_bytes / 2, p->dtype, -1.f, 1.f, seed * 7 + 1)) != W4A16_STATUS_OK)
    goto fail;
  if (td->bias &&
      (st = w4a16_timing_fill_uniform(td->bias, (size_t)p->n, p->dtype, -1.f, 1.f, seed * 7 + 2)) != W4A16_STATUS_OK)
    goto fail;
  if ((st = w4a16_timing_fill_bytes(td->rot, (size_t)p->n * (size_t)p->k / 2, seed * 7 + 3)) != W4A16_STATUS_OK)
    goto fail;
  char *sc = td->rot + w_bytes(p);
  if ((st = w4a16_timing_fill_uniform(sc, (size_t)(g * p->n), p->dtype, 0.005f, 0.02f, seed * 7 + 4)) !=
      W4A16_STATUS_OK)
    goto fail;
  if (z_bytes(p) && (st = w4a16_timing_fill_uniform(sc + s_bytes(p), (size_t)(g * p->n), p->dtype, -0.16f, -0.04f,
                                                    seed * 7 + 5)) != W4A16_STATUS_OK)
    goto fail;
  for (int c = 1; c < td->copies; ++c) {
    if ((e = cudaMemcpy(td->rot + (size_t)c * td->copy_bytes, td->rot, td->copy_bytes, cudaMemcpyDeviceToDevice)) !=
        cudaSuccess) {
      st = w4a16_fail_cuda((int)e, "cudaMemcpy (weight copies)");
      goto fail;
    }
  }
  if ((e = cudaMemset(td->d, 0, d_bytes)) != cudaSuccess || (e = cudaDeviceSynchronize()) != cudaSuccess) {
    st = w4a16_fail_cuda((int)e, "initializing the inputs");
    goto fail;
  }
  *out = td;
  return W4A16_STATUS_OK;

fail:
  w4a16_timing_data_destroy(td);
  return st;
}

const w4a16_problem *w4a16_timing_data_problem(const w4a16_timing_data *td) { return &td->p; }
int w4a16_timing_data_copies(const w4a16_timing_data *td) { return td->copies; }
void *w4a16_timing_data_a(const w4a16_timing_data *td) { return td->a; }
void *w4a16_timing_data_d(const w4a16_timing_data *td) { return td->d; }
void *w4a16_timing_data_stream(const w4a16_timing_data *td) { return (void *)td->stream; }

static w4a16_status launch_kernel(void *ctx, int copy, void *stream, char *msg, size_t cap) {
  w4a16_timing_data *td = ctx;
  const w4a16_problem *p = &td->p;
  char *base = td->rot + (size_t)copy * td->copy_bytes;
  w4a16_gemm_args args;
  memset(&args, 0, sizeof args);
  args.problem = *p;
  args.a = td->a;
  args.w = base;
  args.scales = base + w_bytes(p);
  args.zeros = z_bytes(p) ? base + w_bytes(p) + s_bytes(p) : NULL;
  args.bias = td->bias;
  args.d = td->d;
  args.alpha = 1.0f;
  w4a16_status st = w4a16_gemm(&args, td->kernel, td->workspace, td->workspace_bytes, stream);
  if (st != W4A16_STATUS_OK) snprintf(msg, cap, "%s", w4a16_last_error_message());
  return st;
}

w4a16_status w4a16_timing_data_time(w4a16_timing_data *td, const w4a16_kernel_desc *kernel,
                                    const w4a16_timing_options *options, w4a16_timing_result *res) {
  memset(res, 0, sizeof *res);
  if (!td || !kernel) return set_result(res, W4A16_STATUS_NULL_POINTER, "no data or no kernel");
  size_t ws = 0;
  w4a16_status st = w4a16_workspace_size(kernel, &td->p, td->sm_count, &ws);
  if (st != W4A16_STATUS_OK) return set_result(res, st, "%s", w4a16_last_error_message());
  if (ws > td->workspace_bytes) { /* grown before timing, never inside it */
    cudaFree(td->workspace);
    td->workspace = NULL;
    td->workspace_bytes = 0;
    if (dev_alloc(&td->workspace, ws, "workspace") != W4A16_STATUS_OK)
      return set_result(res, W4A16_STATUS_OUT_OF_MEMORY, "%s", w4a16_last_error_message());
    td->workspace_bytes = ws;
  }
  td->kernel = kernel;
  w4a16_time_launch(launch_kernel, td, td->copies, td->stream, options, res);
  td->kernel = NULL;
  return res->status;
}

/* timing.c - the timing method shared by the profiler and the benchmark harness (see timing.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "timing.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static w4a16_timing_options normalized_options(const w4a16_timing_options *options) {
  w4a16_timing_options o = {0, 0, 0, 0, 0, 0};
  if (options) o = *options;
  if (o.warmup <= 0) o.warmup = DEFAULT_WARMUP;
  if (o.samples <= 0) o.samples = DEFAULT_SAMPLES;
  if (o.samples > MAX_SAMPLES) o.samples = MAX_SAMPLES;
  if (!(o.replay_target_us > 0)) o.replay_target_us = DEFAULT_REPLAY_US;
  if (o.max_launches <= 0) o.max_launches = DEFAULT_MAX_LAUNCHES;
  return o;
}

/* A launch made ready to time: its graph of res->launches launches, instantiated and uploaded. */
typedef struct timer {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
} timer;

static void timer_release(timer *t) {
  if (t->exec) cudaGraphExecDestroy(t->exec);
  if (t->graph) cudaGraphDestroy(t->graph);
  t->exec = NULL;
  t->graph = NULL;
}

/* Steps 1-3 of the method (timing.h): the checked launch, the warm-up, the graph of L launches and
   one untimed replay. o is normalized. Sets res->status (and message), res->launches, res->copies. */
static w4a16_status timer_prepare(w4a16_timing_launch_fn fn, void *ctx, int copies, cudaStream_t stream,
                                  const w4a16_timing_options *o, timer *t, w4a16_timing_result *res) {
  memset(res, 0, sizeof *res);
  memset(t, 0, sizeof *t);
  if (!fn) return set_result(res, W4A16_STATUS_NULL_POINTER, "no launch function");
  res->copies = copies;
  char msg[256] = "";
  cudaEvent_t ev[2] = {NULL, NULL};
  cudaError_t e;
  cudaGetLastError(); /* a leftover non-sticky error is not this candidate's */
  if ((e = cudaEventCreate(&ev[0])) != cudaSuccess || (e = cudaEventCreate(&ev[1])) != cudaSuccess) {
    cuda_result(res, e, "cudaEventCreate");
    goto done;
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
  for (int i = 1; i <= o->warmup; ++i) {
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
  double est_us = (double)ms * 1000.0 / o->warmup;
  if (!(est_us > 0.1)) est_us = 0.1;

  /* 3. capture L launches over the copies in one graph */
  double want = ceil(o->replay_target_us / est_us);
  int launches = want > (double)o->max_launches ? o->max_launches : (int)want;
  if (launches < 2) launches = 2;
  /* a whole number of rounds over the copies, so that the rotation holds across replays too (with
     launches % copies = r > 0 a replay's first r launches would reread the copies its previous
     replay's last r launches read, from L2 where a copy fits); rounded down where rounding up
     would pass max_launches and a round remains */
  const int rounds_up = (launches + copies - 1) / copies, rounds_down = launches / copies;
  launches = rounds_up * copies;
  if (launches > o->max_launches && rounds_down >= 1) launches = rounds_down * copies;
  res->launches = launches;
  if ((e = cudaStreamBeginCapture(stream, o->relaxed_capture ? cudaStreamCaptureModeRelaxed
                                                             : cudaStreamCaptureModeThreadLocal)) != cudaSuccess) {
    cuda_result(res, e, "cudaStreamBeginCapture");
    goto done;
  }
  for (int i = 0; i < launches; ++i) {
    st = fn(ctx, i % copies, stream, msg, sizeof msg);
    if (st != W4A16_STATUS_OK) {
      cudaStreamEndCapture(stream, &t->graph);
      cudaGetLastError();
      set_result(res, st, "launch failed during graph capture: %s", msg[0] ? msg : w4a16_status_string(st));
      goto done;
    }
  }
  if ((e = cudaStreamEndCapture(stream, &t->graph)) != cudaSuccess) {
    cudaGetLastError();
    cuda_result(res, e, "the launch is not capturable in a CUDA graph (cudaStreamEndCapture)");
    goto done;
  }
  if ((e = cudaGraphInstantiate(&t->exec, t->graph, 0)) != cudaSuccess) {
    cudaGetLastError();
    cuda_result(res, e, "cudaGraphInstantiate");
    goto done;
  }
  /* one untimed replay (uploads the graph) */
  if ((e = cudaGraphLaunch(t->exec, stream)) != cudaSuccess || (e = cudaStreamSynchronize(stream)) != cudaSuccess) {
    cuda_result(res, e, "graph replay");
    goto done;
  }
  res->status = W4A16_STATUS_OK;
  res->message[0] = '\0';

done:
  for (int i = 0; i < 2; ++i)
    if (ev[i]) cudaEventDestroy(ev[i]);
  if (res->status != W4A16_STATUS_OK) timer_release(t);
  return res->status;
}

static double wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* the median of n samples (sorted in place) */
static double median_of(double *samp, int n) {
  qsort(samp, (size_t)n, sizeof *samp, cmp_double);
  return (n % 2) ? samp[n / 2] : 0.5 * (samp[n / 2 - 1] + samp[n / 2]);
}

/* median, min and max of n per-launch samples (sorted in place) into res, which becomes OK */
static void set_stats(w4a16_timing_result *res, double *samp, int n) {
  res->median_us = median_of(samp, n);
  res->samples = n;
  res->min_us = samp[0];
  res->max_us = samp[n - 1];
  res->status = W4A16_STATUS_OK;
  res->message[0] = '\0';
}

/* Eager timing (timing.h) of fn, prepared by timer_prepare (res->launches launches a sample); ev: two
   events; samp / host: o->samples doubles each. Sets res. */
static void time_eager(w4a16_timing_launch_fn fn, void *ctx, int copies, cudaStream_t stream,
                       const w4a16_timing_options *o, cudaEvent_t ev[2], double *samp, double *host,
                       w4a16_timing_result *res) {
  const int launches = res->launches;
  char msg[256] = "";
  cudaError_t e = cudaSuccess;
  for (int s = 0; s < o->samples; ++s) {
    if ((e = cudaStreamSynchronize(stream)) != cudaSuccess || (e = cudaEventRecord(ev[0], stream)) != cudaSuccess)
      break;
    const double t0 = wall_us();
    for (int i = 0; i < launches; ++i) {
      const w4a16_status st = fn(ctx, i % copies, stream, msg, sizeof msg);
      if (st != W4A16_STATUS_OK) {
        set_result(res, st, "eager launch %d failed: %s", i, msg[0] ? msg : w4a16_status_string(st));
        return;
      }
    }
    host[s] = (wall_us() - t0) / launches;
    float ms = 0.f;
    if ((e = cudaEventRecord(ev[1], stream)) != cudaSuccess || (e = cudaEventSynchronize(ev[1])) != cudaSuccess ||
        (e = cudaEventElapsedTime(&ms, ev[0], ev[1])) != cudaSuccess)
      break;
    samp[s] = (double)ms * 1000.0 / launches;
  }
  if (e != cudaSuccess) {
    cuda_result(res, e, "eager launches");
    return;
  }
  res->host_us = median_of(host, o->samples);
  set_stats(res, samp, o->samples);
}

w4a16_status w4a16_time_launch(w4a16_timing_launch_fn fn, void *ctx, int copies, void *stream_v,
                               const w4a16_timing_options *options, w4a16_timing_result *res) {
  const w4a16_timing_options o = normalized_options(options);
  if (copies < 1) copies = 1;
  cudaStream_t stream = (cudaStream_t)stream_v;
  timer t;
  if (timer_prepare(fn, ctx, copies, stream, &o, &t, res) != W4A16_STATUS_OK) return res->status;
  const int launches = res->launches;

  /* everything the timed region uses is made here */
  const int nev = o.samples + 1;
  cudaEvent_t *ev = calloc((size_t)nev, sizeof *ev);
  double *samp = calloc((size_t)o.samples * 2, sizeof *samp); /* eager: then the host's samples */
  cudaError_t e;
  float ms = 0.f;
  int made = 0;
  res->status = W4A16_STATUS_INTERNAL_ERROR; /* until the samples are in */
  if (!ev || !samp) {
    set_result(res, W4A16_STATUS_OUT_OF_MEMORY, "host allocation of %d samples failed", o.samples);
    goto done;
  }
  for (; made < nev; ++made) {
    if ((e = cudaEventCreate(&ev[made])) != cudaSuccess) {
      cuda_result(res, e, "cudaEventCreate");
      goto done;
    }
  }

  if (o.eager) {
    time_eager(fn, ctx, copies, stream, &o, ev, samp, samp + o.samples, res);
    goto done;
  }
  /* 4. timed region: back-to-back replays between events, no allocation, no host sync */
  e = cudaEventRecord(ev[0], stream);
  for (int s = 0; s < o.samples && e == cudaSuccess; ++s) {
    e = cudaGraphLaunch(t.exec, stream);
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
  set_stats(res, samp, o.samples);

done:
  timer_release(&t);
  for (int i = 0; i < made; ++i) cudaEventDestroy(ev[i]);
  free(ev);
  free(samp);
  return res->status;
}

w4a16_status w4a16_time_launches(const w4a16_timing_candidate *cands, int n, int copies, void *stream_v,
                                 const w4a16_timing_options *options, w4a16_timing_result *res) {
  if (!cands || !res) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "candidates or results is NULL");
  if (n < 1) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "n = %d candidates: must be >= 1", n);
  if (options && options->eager)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "eager timing is one candidate at a time (w4a16_time_launch), "
                                                  "not in rounds");
  const w4a16_timing_options o = normalized_options(options);
  if (copies < 1) copies = 1;
  cudaStream_t stream = (cudaStream_t)stream_v;
  timer *t = calloc((size_t)n, sizeof *t);
  int *ready = calloc((size_t)n, sizeof *ready);             /* indices of the prepared candidates */
  double *samp = calloc((size_t)n * (size_t)o.samples, sizeof *samp); /* [candidate][round] */
  cudaEvent_t *ev = calloc((size_t)n + 1, sizeof *ev);
  w4a16_status out = W4A16_STATUS_OK;
  int made = 0, nready = 0;
  cudaError_t e = cudaSuccess;
  if (!t || !ready || !samp || !ev) {
    out = w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "host allocation for %d candidates x %d samples failed", n,
                     o.samples);
    goto done;
  }
  for (; made < n + 1; ++made) {
    if ((e = cudaEventCreate(&ev[made])) != cudaSuccess) {
      out = w4a16_fail_cuda((int)e, "cudaEventCreate");
      goto done;
    }
  }
  /* steps 1-3 for every candidate; the ones that fail keep their status and take no turns */
  for (int i = 0; i < n; ++i) {
    w4a16_timing_options oi = o;
    if (cands[i].relaxed_capture) oi.relaxed_capture = 1;
    if (timer_prepare(cands[i].fn, cands[i].ctx, cands[i].copies > 0 ? cands[i].copies : copies, stream, &oi, &t[i],
                      &res[i]) == W4A16_STATUS_OK)
      ready[nready++] = i;
  }

  /* one untimed round, then o.samples timed rounds: each replays every ready candidate once, back to
     back between events, starting one candidate further along each round */
  for (int r = -1; r < o.samples && nready > 0; ++r) {
    const int first = r < 0 ? 0 : r % nready;
    e = cudaEventRecord(ev[0], stream);
    for (int j = 0; j < nready && e == cudaSuccess; ++j) {
      e = cudaGraphLaunch(t[ready[(first + j) % nready]].exec, stream);
      if (e == cudaSuccess) e = cudaEventRecord(ev[j + 1], stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    for (int j = 0; j < nready && e == cudaSuccess && r >= 0; ++j) {
      float ms = 0.f;
      const int c = ready[(first + j) % nready];
      if ((e = cudaEventElapsedTime(&ms, ev[j], ev[j + 1])) == cudaSuccess)
        samp[(size_t)c * o.samples + r] = (double)ms * 1000.0 / res[c].launches;
    }
    if (e != cudaSuccess) break;
  }
  for (int j = 0; j < nready; ++j) {
    const int c = ready[j];
    if (e != cudaSuccess)
      cuda_result(&res[c], e, "timed graph replays");
    else
      set_stats(&res[c], samp + (size_t)c * o.samples, o.samples);
  }

done:
  if (t)
    for (int i = 0; i < n; ++i) timer_release(&t[i]);
  for (int i = 0; i < made; ++i) cudaEventDestroy(ev[i]);
  if (out != W4A16_STATUS_OK)
    for (int i = 0; i < n; ++i) {
      memset(&res[i], 0, sizeof res[i]);
      set_result(&res[i], out, "%s", w4a16_last_error_message());
    }
  free(t);
  free(ready);
  free(samp);
  free(ev);
  return out;
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

w4a16_status w4a16_timing_alloc_copies(size_t copy_bytes, size_t rotate_min_bytes, int held, void **rot,
                                       int *copies) {
  *rot = NULL;
  *copies = 1;
  size_t free_b = 0, total_b = 0;
  cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
  if (e != cudaSuccess) return w4a16_fail_cuda((int)e, "cudaMemGetInfo");
  if (held < 0) held = 0;
  int c = w4a16_timing_copies(copy_bytes, rotate_min_bytes, free_b / 2 + (size_t)held * copy_bytes);
  w4a16_status st = W4A16_STATUS_OK;
  for (;;) {
    const int alloc = c > held ? c - held : 0;
    st = dev_alloc(rot, (size_t)alloc * copy_bytes, "rotating weight copies");
    if (st == W4A16_STATUS_OK || st != W4A16_STATUS_OUT_OF_MEMORY || c == 1) break;
    c = (c + 1) / 2;
  }
  if (st != W4A16_STATUS_OK) return st;
  *copies = c > held ? c : held;
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
  td->copy_bytes = w4a16_timing_copy_bytes(p);
  if ((st = w4a16_timing_alloc_copies(td->copy_bytes, rotate_min_bytes, 0, (void **)&td->rot, &td->copies)) !=
      W4A16_STATUS_OK)
    goto fail;

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

w4a16_status w4a16_timing_data_integer_zeros(w4a16_timing_data *td, uint64_t seed) {
  if (!td) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "w4a16_timing_data_integer_zeros: td is NULL");
  const w4a16_problem *p = &td->p;
  if (!z_bytes(p)) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "w4a16_timing_data_integer_zeros: the problem has no zeros");
  const size_t count = (size_t)(p->k / p->group_size) * (size_t)p->n;
  uint16_t *buf = malloc(2 * count * sizeof *buf);
  if (!buf) return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "w4a16_timing_data_integer_zeros: host buffer");
  uint16_t *sc = buf, *zs = buf + count;
  cudaError_t e = cudaMemcpy(sc, td->rot + w_bytes(p), count * 2, cudaMemcpyDeviceToHost);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; e == cudaSuccess && i < count; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  /* xorshift64 */
    const float zq = (float)(x >> 60), s = p->dtype == W4A16_DTYPE_BF16 ? w4a16_bf16_to_float(sc[i]) : w4a16_half_to_float(sc[i]);
    zs[i] = p->dtype == W4A16_DTYPE_BF16 ? w4a16_float_to_bf16(-s * zq) : w4a16_float_to_half(-s * zq);
  }
  for (int c = 0; e == cudaSuccess && c < td->copies; ++c)
    e = cudaMemcpy(td->rot + (size_t)c * td->copy_bytes + w_bytes(p) + s_bytes(p), zs, count * 2, cudaMemcpyHostToDevice);
  free(buf);
  return e == cudaSuccess ? W4A16_STATUS_OK : w4a16_fail_cuda((int)e, "w4a16_timing_data_integer_zeros: cudaMemcpy");
}

const w4a16_problem *w4a16_timing_data_problem(const w4a16_timing_data *td) { return &td->p; }
int w4a16_timing_data_copies(const w4a16_timing_data *td) { return td->copies; }
void *w4a16_timing_data_a(const w4a16_timing_data *td) { return td->a; }
void *w4a16_timing_data_d(const w4a16_timing_data *td) { return td->d; }
void *w4a16_timing_data_stream(const w4a16_timing_data *td) { return (void *)td->stream; }

typedef struct kernel_launch {
  w4a16_timing_data *td;
  const w4a16_kernel_desc *kernel;
} kernel_launch;

static w4a16_status launch_kernel(void *ctx, int copy, void *stream, char *msg, size_t cap) {
  const kernel_launch *kl = ctx;
  w4a16_timing_data *td = kl->td;
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
  w4a16_status st = w4a16_gemm(&args, kl->kernel, td->workspace, td->workspace_bytes, stream);
  if (st != W4A16_STATUS_OK) snprintf(msg, cap, "%s", w4a16_last_error_message());
  return st;
}

/* Grows td's workspace to ws bytes (before timing, never inside it). */
static w4a16_status grow_workspace(w4a16_timing_data *td, size_t ws) {
  if (ws <= td->workspace_bytes) return W4A16_STATUS_OK;
  cudaFree(td->workspace);
  td->workspace = NULL;
  td->workspace_bytes = 0;
  w4a16_status st = dev_alloc(&td->workspace, ws, "workspace");
  if (st == W4A16_STATUS_OK) td->workspace_bytes = ws;
  return st;
}

w4a16_status w4a16_timing_data_time(w4a16_timing_data *td, const w4a16_kernel_desc *kernel,
                                    const w4a16_timing_options *options, w4a16_timing_result *res) {
  memset(res, 0, sizeof *res);
  if (!td || !kernel) return set_result(res, W4A16_STATUS_NULL_POINTER, "no data or no kernel");
  size_t ws = 0;
  w4a16_status st = w4a16_workspace_size(kernel, &td->p, td->sm_count, &ws);
  if (st != W4A16_STATUS_OK) return set_result(res, st, "%s", w4a16_last_error_message());
  if ((st = grow_workspace(td, ws)) != W4A16_STATUS_OK) return set_result(res, st, "%s", w4a16_last_error_message());
  kernel_launch kl = {td, kernel};
  return w4a16_time_launch(launch_kernel, &kl, td->copies, td->stream, options, res);
}

w4a16_status w4a16_timing_data_time_many(w4a16_timing_data *td, const w4a16_kernel_desc *const *kernels, int n,
                                         const w4a16_timing_options *options, w4a16_timing_result *res) {
  return w4a16_timing_data_time_with(td, kernels, n, NULL, 0, options, res);
}

w4a16_status w4a16_timing_data_time_with(w4a16_timing_data *td, const w4a16_kernel_desc *const *kernels, int n,
                                         const w4a16_timing_candidate *extra, int n_extra,
                                         const w4a16_timing_options *options, w4a16_timing_result *res) {
  if (!td || !kernels || !res || (n_extra > 0 && !extra))
    return w4a16_fail(W4A16_STATUS_NULL_POINTER, "td, kernels, extra or res is NULL");
  if (n < 1 || n_extra < 0)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "n = %d kernels, %d extra: must be >= 1 and >= 0", n, n_extra);
  const int total = n + n_extra;
  kernel_launch *kl = calloc((size_t)n, sizeof *kl);
  w4a16_timing_candidate *c = calloc((size_t)total, sizeof *c);
  int *slot = calloc((size_t)total, sizeof *slot); /* res[slot[j]] is candidate j's */
  w4a16_timing_result *cres = calloc((size_t)total, sizeof *cres);
  w4a16_status st = W4A16_STATUS_OK;
  if (!kl || !c || !slot || !cres) {
    /* as w4a16_time_launches' own early failure: every result carries the status */
    st = w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "host allocation for %d kernels and %d extra failed", n, n_extra);
    for (int i = 0; i < total; ++i) {
      memset(&res[i], 0, sizeof res[i]);
      set_result(&res[i], st, "%s", w4a16_last_error_message());
    }
    goto done;
  }
  size_t ws_max = 0;
  int m = 0;
  for (int i = 0; i < n; ++i) {
    memset(&res[i], 0, sizeof res[i]);
    size_t ws = 0;
    w4a16_status wst = kernels[i] ? w4a16_workspace_size(kernels[i], &td->p, td->sm_count, &ws)
                                  : w4a16_fail(W4A16_STATUS_NULL_POINTER, "kernels[%d] is NULL", i);
    if (wst != W4A16_STATUS_OK) {
      set_result(&res[i], wst, "%s", w4a16_last_error_message());
      continue;
    }
    if (ws > ws_max) ws_max = ws;
    kl[m] = (kernel_launch){td, kernels[i]};
    c[m] = (w4a16_timing_candidate){launch_kernel, &kl[m], 0, 0};
    slot[m++] = i;
  }
  for (int j = 0; j < n_extra; ++j) {
    memset(&res[n + j], 0, sizeof res[n + j]);
    c[m] = extra[j];
    slot[m++] = n + j;
  }
  if (m == 0) goto done;
  if ((st = grow_workspace(td, ws_max)) != W4A16_STATUS_OK) {
    for (int j = 0; j < m; ++j) set_result(&res[slot[j]], st, "%s", w4a16_last_error_message());
    goto done;
  }
  st = w4a16_time_launches(c, m, td->copies, td->stream, options, cres);
  for (int j = 0; j < m; ++j) res[slot[j]] = cres[j];

done:
  free(kl);
  free(c);
  free(slot);
  free(cres);
  return st;
}

/*
 * harness.c - the benchmark harness: every registered W4A16 kernel that can
 * implement each problem, timed with runtime/timing.h's method (rotating weight
 * copies, warm-up, CUDA-graph replays between events, median), ranked, against
 * the roofline floor (DESIGN.md section 7) and cuBLASLt on the same dtype.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cublas_ref.h"
#include "timing.h"
#include "w4a16/w4a16.h"

#if W4A16_BENCH_HAVE_JANSSON
#include <jansson.h>
#endif

#define PROG "w4a16_bench"

static const char *g_prog = PROG; /* argv[0]: "w4a16 bench" when the w4a16 command runs us */

static void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void errmsg(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", g_prog);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

/* DESIGN.md section 7: Llama-3-8B and Llama-3-70B linear layers, and M */
static const int64_t DEFAULT_NK[][2] = {{6144, 4096},  {4096, 4096},  {28672, 4096},  {4096, 14336},
                                        {10240, 8192}, {8192, 8192},  {57344, 8192},  {8192, 28672}};
static const int64_t DEFAULT_M[] = {1, 16, 64, 256, 1024, 4096};

typedef enum { FMT_TEXT, FMT_CSV, FMT_JSON } out_format;

typedef struct nk_pair {
  int64_t n, k;
} nk_pair;

typedef struct bench_opts {
  int64_t *ms;
  int nm;
  int64_t *ns, *ks;
  int nn, nk_n;
  nk_pair *pairs;
  int npairs;
  w4a16_dtype dtype;
  w4a16_quant_mode mode;
  int group;
  int bias;
  char *include, *exclude; /* pattern lists as given */
  int top;
  out_format fmt;
  const char *output;
  double peak_gbps, peak_tflops;
  int warmup, iterations;
  size_t rotate_bytes;
  unsigned long long seed;
  int cublas_algos; /* 0 = no cuBLAS */
  int rounds;       /* kernels and cuBLAS timed in rounds (runtime/timing.h) */
  int eager;        /* launches issued by the host one by one, not graph replays (runtime/timing.h) */
  int quiet, list_only;
  int int_zeros; /* --zeros int: integer zero points z = -s zq (checkpoints), else random float zeros */
} bench_opts;

typedef struct row {
  const w4a16_kernel_desc *kd;
  w4a16_timing_result t;
  size_t index;
} row;

typedef struct bench {
  bench_opts o;
  FILE *out;
  int tty;
  int progress_open;
  bench_cublas *cublas;
  char device_name[256];
  int cc, sm_count;
  size_t l2;
  int csv_header_done;
#if W4A16_BENCH_HAVE_JANSSON
  json_t *json_problems;
#endif
} bench;

/* ------------------------------------------------------------------------- */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f, "usage: %s [options]\n", g_prog);
  fprintf(f,
          "Times every registered W4A16 kernel that can implement each problem and prints a\n"
          "ranked table per problem: median time, TFLOP/s, effective GB/s, fraction of the\n"
          "roofline floor and the ratio against cuBLASLt (same dtype, dense weights).\n"
          "\n"
          "Problems (default: DESIGN.md section 7, (N,K) of Llama-3-8B/70B x M in 1,16,64,256,1024,4096):\n"
          "  --m LIST              token counts, comma separated (e.g. 1,16,4096)\n"
          "  --n LIST --k LIST     output and reduction sizes; every N is paired with every K\n"
          "  --nk LIST             explicit NxK pairs (e.g. 57344x8192,8192x28672)\n"
          "  --dtype f16|bf16      activation dtype (default bf16)\n"
          "  --mode fgs|fgsz|pc    FINEGRAINED_SCALE_ONLY (default), _AND_ZEROS, PER_COLUMN_SCALE_ONLY\n"
          "  --group G             group size of the fine-grained modes (default 128; 0: one group a\n"
          "                        column, e.g. --mode fgsz --group 0 for per-column zero points)\n"
          "  --bias                with a bias vector\n"
          "Kernels:\n"
          "  --kernels PATTERNS    only kernels whose names match ('*' wildcards, ',' separated;\n"
          "                        without '*' a pattern must match the whole name; 'all' = every one)\n"
          "  --exclude PATTERNS    drop the kernels that match\n"
          "  --top N               show the N fastest kernels per problem (failures are always listed)\n"
          "  --list                print the problems and matching kernels, time nothing (no GPU needed)\n"
          "Timing:\n"
          "  --warmup N            warm-up launches per kernel (default 5)\n"
          "  --iterations N        timed CUDA-graph replays (--eager: samples of as many eager launches),\n"
          "                        median reported (default 10)\n"
          "  --rotate-bytes B      bytes the rotating weight copies span (default 4 x L2; K/M/G suffix)\n"
          "  --seed N              random inputs' seed (default 1)\n"
          "  --zeros int|float     zero points (--mode fgsz): integer ones, z = -s zq with zq in 0..15 as\n"
          "                        checkpoints have them, or random float ones (default float)\n"
          "  --cublas-algos N      time cuBLASLt's first N heuristic algorithms, keep the best (default 4)\n"
          "  --no-cublas           skip the cuBLASLt reference\n"
          "  --rounds              time every kernel and cuBLASLt algorithm of a problem in the same\n"
          "                        rounds (each one graph replay a round) instead of one after the other,\n"
          "                        so that the card's clock (power limit) weighs on all alike\n"
          "  --eager               time launches the host issues one call after another (no CUDA graph),\n"
          "                        as a caller without graphs sees them: the stream's time a launch\n"
          "                        (median_us; the host's rate where it issues more slowly than the GPU\n"
          "                        runs) and the host's time a call (host_us)\n"
          "Roofline (DESIGN.md section 7, H100 80GB HBM3):\n"
          "  --peak-gbps X         memory ceiling in GB/s (default 3100)\n"
          "  --peak-tflops X       tensor-core ceiling in TFLOP/s (default 800)\n"
          "Output:\n"
          "  --csv | --json        machine-readable output instead of text tables\n"
          "  -o, --output FILE     write the output to FILE instead of stdout\n"
          "  -q, --quiet           no progress line on stderr\n"
          "  -h, --help            this text\n"
          "\n"
          "floor = max(bytes / peak-gbps, flops / peak-tflops) with bytes = packed W + scales (+ zeros)\n"
          "+ A + D (+ bias); 'floor' column = floor / time (1.0 = at the roofline); 'vs_cublas' =\n"
          "cuBLASLt time / kernel time (> 1: faster than cuBLAS). The cuBLASLt row's floor column uses\n"
          "its own dense bytes. Exit status: 0 done, 1 CUDA/memory failure, 2 bad arguments or no GPU.\n");
}

static int bad_arg(const char *opt, const char *val, const char *why) {
  errmsg("%s '%s': %s (see --help)\n", opt, val ? val : "", why);
  return 2;
}

/* comma-separated list of integers >= 1; returns 0 or 2 */
static int parse_int_list(const char *opt, const char *s, int64_t **out, int *count) {
  free(*out);
  *out = NULL;
  *count = 0;
  size_t cap = 1;
  for (const char *c = s; *c; ++c) cap += *c == ',';
  int64_t *v = calloc(cap, sizeof *v);
  if (!v) return bad_arg(opt, s, "out of memory");
  const char *p = s;
  int n = 0;
  while (*p) {
    char *end;
    errno = 0;
    long long x = strtoll(p, &end, 10);
    if (end == p || errno || x < 1 || x > INT32_MAX || (*end && *end != ',')) {
      free(v);
      return bad_arg(opt, s, "expected a comma-separated list of integers >= 1");
    }
    v[n++] = x;
    p = *end ? end + 1 : end;
    if (*end == ',' && !*p) {
      free(v);
      return bad_arg(opt, s, "trailing comma");
    }
  }
  if (n == 0) {
    free(v);
    return bad_arg(opt, s, "empty list");
  }
  *out = v;
  *count = n;
  return 0;
}

static int parse_pairs(const char *opt, const char *s, nk_pair **out, int *count) {
  int n = 0;
  size_t cap = 1;
  for (const char *c = s; *c; ++c) cap += *c == ',';
  nk_pair *v = calloc(cap, sizeof *v);
  if (!v) return bad_arg(opt, s, "out of memory");
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    long long a = strtoll(p, &end, 10);
    if (end == p || errno || a < 1 || a > INT32_MAX || (*end != 'x' && *end != 'X')) goto bad;
    p = end + 1;
    long long b = strtoll(p, &end, 10);
    if (end == p || errno || b < 1 || b > INT32_MAX || (*end && *end != ',')) goto bad;
    v[n].n = a;
    v[n].k = b;
    ++n;
    p = *end ? end + 1 : end;
    if (*end == ',' && !*p) goto bad;
  }
  if (n == 0) goto bad;
  free(*out);
  *out = v;
  *count = n;
  return 0;
bad:
  free(v);
  return bad_arg(opt, s, "expected NxK pairs separated by commas, e.g. 57344x8192,8192x28672");
}

static int parse_int(const char *opt, const char *s, int lo, int *out) {
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (end == s || *end || errno || x < lo || x > INT32_MAX) {
    char why[64];
    snprintf(why, sizeof why, "expected an integer >= %d", lo);
    return bad_arg(opt, s, why);
  }
  *out = (int)x;
  return 0;
}

static int parse_double(const char *opt, const char *s, double *out) {
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || *end || errno || !(x > 0) || !isfinite(x)) return bad_arg(opt, s, "expected a number > 0");
  *out = x;
  return 0;
}

static int parse_bytes(const char *opt, const char *s, size_t *out) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (end == s || errno || s[0] == '-') return bad_arg(opt, s, "expected a byte count (K/M/G suffix allowed)");
  unsigned long long mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1ull << 10, ++end;
  else if (*end == 'M' || *end == 'm') mul = 1ull << 20, ++end;
  else if (*end == 'G' || *end == 'g') mul = 1ull << 30, ++end;
  if (*end) return bad_arg(opt, s, "expected a byte count (K/M/G suffix allowed)");
  if (x == 0 || x > (unsigned long long)SIZE_MAX / mul) return bad_arg(opt, s, "expected a byte count > 0 that fits in 64 bits");
  *out = (size_t)(x * mul);
  return 0;
}

enum {
  OPT_M = 256, OPT_N, OPT_K, OPT_NK, OPT_DTYPE, OPT_MODE, OPT_GROUP, OPT_BIAS, OPT_KERNELS, OPT_EXCLUDE, OPT_TOP,
  OPT_LIST, OPT_WARMUP, OPT_ITER, OPT_ROTATE, OPT_SEED, OPT_CUBLAS_ALGOS, OPT_NO_CUBLAS, OPT_ROUNDS, OPT_EAGER,
  OPT_PEAK_GBPS, OPT_PEAK_TFLOPS, OPT_CSV, OPT_JSON, OPT_ZEROS
};

static void free_opts(bench_opts *o) {
  free(o->ms);
  free(o->ns);
  free(o->ks);
  free(o->pairs);
  free(o->include);
  free(o->exclude);
  memset(o, 0, sizeof *o);
}

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* returns -1 to go on, else an exit status */
static int parse_args(int argc, char **argv, bench_opts *o) {
  static const struct option longs[] = {
      {"m", required_argument, NULL, OPT_M},
      {"n", required_argument, NULL, OPT_N},
      {"k", required_argument, NULL, OPT_K},
      {"nk", required_argument, NULL, OPT_NK},
      {"dtype", required_argument, NULL, OPT_DTYPE},
      {"mode", required_argument, NULL, OPT_MODE},
      {"group", required_argument, NULL, OPT_GROUP},
      {"bias", no_argument, NULL, OPT_BIAS},
      {"kernels", required_argument, NULL, OPT_KERNELS},
      {"exclude", required_argument, NULL, OPT_EXCLUDE},
      {"top", required_argument, NULL, OPT_TOP},
      {"list", no_argument, NULL, OPT_LIST},
      {"warmup", required_argument, NULL, OPT_WARMUP},
      {"iterations", required_argument, NULL, OPT_ITER},
      {"rotate-bytes", required_argument, NULL, OPT_ROTATE},
      {"seed", required_argument, NULL, OPT_SEED},
      {"zeros", required_argument, NULL, OPT_ZEROS},
      {"cublas-algos", required_argument, NULL, OPT_CUBLAS_ALGOS},
      {"no-cublas", no_argument, NULL, OPT_NO_CUBLAS},
      {"rounds", no_argument, NULL, OPT_ROUNDS},
      {"eager", no_argument, NULL, OPT_EAGER},
      {"peak-gbps", required_argument, NULL, OPT_PEAK_GBPS},
      {"peak-tflops", required_argument, NULL, OPT_PEAK_TFLOPS},
      {"csv", no_argument, NULL, OPT_CSV},
      {"json", no_argument, NULL, OPT_JSON},
      {"output", required_argument, NULL, 'o'},
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  o->dtype = W4A16_DTYPE_BF16;
  o->mode = W4A16_FINEGRAINED_SCALE_ONLY;
  o->group = 128;
  o->top = 0;
  o->fmt = FMT_TEXT;
  o->peak_gbps = 3100.0;
  o->peak_tflops = 800.0;
  o->seed = 1;
  o->cublas_algos = 4;
  int group_given = 0, fmt_given = 0, rc = 0;
#ifdef __GLIBC__
  optind = 0; /* full re-initialization: w4a16 bench may call us after its own parsing */
#else
  optind = 1;
#endif
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":o:qh", longs, NULL)) != -1) {
    const char *a = optarg;
    switch (c) {
      case OPT_M: rc = parse_int_list("--m", a, &o->ms, &o->nm); break;
      case OPT_N: rc = parse_int_list("--n", a, &o->ns, &o->nn); break;
      case OPT_K: rc = parse_int_list("--k", a, &o->ks, &o->nk_n); break;
      case OPT_NK: rc = parse_pairs("--nk", a, &o->pairs, &o->npairs); break;
      case OPT_DTYPE:
        if (!strcmp(a, "bf16")) o->dtype = W4A16_DTYPE_BF16;
        else if (!strcmp(a, "f16") || !strcmp(a, "fp16")) o->dtype = W4A16_DTYPE_F16;
        else rc = bad_arg("--dtype", a, "expected f16 or bf16");
        break;
      case OPT_MODE:
        if (!strcmp(a, "fgs")) o->mode = W4A16_FINEGRAINED_SCALE_ONLY;
        else if (!strcmp(a, "fgsz")) o->mode = W4A16_FINEGRAINED_SCALE_AND_ZEROS;
        else if (!strcmp(a, "pc")) o->mode = W4A16_PER_COLUMN_SCALE_ONLY;
        else rc = bad_arg("--mode", a, "expected fgs, fgsz or pc");
        break;
      case OPT_GROUP:
        rc = parse_int("--group", a, 0, &o->group);
        if (!rc && o->group != 0 && o->group != 32 && o->group != 64 && o->group != 128 && o->group != 256)
          rc = bad_arg("--group", a, "expected 32, 64, 128, 256 or 0 (one group a column: K)");
        group_given = 1;
        break;
      case OPT_BIAS: o->bias = 1; break;
      case OPT_KERNELS:
        free(o->include);
        o->include = dup_str(a);
        break;
      case OPT_EXCLUDE:
        free(o->exclude);
        o->exclude = dup_str(a);
        break;
      case OPT_TOP: rc = parse_int("--top", a, 1, &o->top); break;
      case OPT_LIST: o->list_only = 1; break;
      case OPT_WARMUP: rc = parse_int("--warmup", a, 1, &o->warmup); break;
      case OPT_ITER:
        rc = parse_int("--iterations", a, 1, &o->iterations);
        if (!rc && o->iterations > 1000) rc = bad_arg("--iterations", a, "expected at most 1000 (the timed samples' cap)");
        break;
      case OPT_ROTATE: rc = parse_bytes("--rotate-bytes", a, &o->rotate_bytes); break;
      case OPT_SEED: {
        char *end;
        errno = 0;
        o->seed = strtoull(a, &end, 0);
        if (end == a || *end || errno || a[0] == '-') rc = bad_arg("--seed", a, "expected an integer >= 0");
        break;
      }
      case OPT_ZEROS:
        if (!strcmp(a, "int")) o->int_zeros = 1;
        else if (!strcmp(a, "float")) o->int_zeros = 0;
        else rc = bad_arg("--zeros", a, "expected int or float");
        break;
      case OPT_CUBLAS_ALGOS: rc = parse_int("--cublas-algos", a, 0, &o->cublas_algos); break;
      case OPT_NO_CUBLAS: o->cublas_algos = 0; break;
      case OPT_ROUNDS: o->rounds = 1; break;
      case OPT_EAGER: o->eager = 1; break;
      case OPT_PEAK_GBPS: rc = parse_double("--peak-gbps", a, &o->peak_gbps); break;
      case OPT_PEAK_TFLOPS: rc = parse_double("--peak-tflops", a, &o->peak_tflops); break;
      case OPT_CSV:
      case OPT_JSON:
        if (fmt_given && o->fmt != (c == OPT_CSV ? FMT_CSV : FMT_JSON)) {
          errmsg("--csv and --json exclude each other (see --help)\n");
          rc = 2;
        }
        o->fmt = c == OPT_CSV ? FMT_CSV : FMT_JSON;
        fmt_given = 1;
        break;
      case 'o': o->output = a; break;
      case 'q': o->quiet = 1; break;
      case 'h': usage(stdout); return 0;
      case ':':
        errmsg("option '%s' needs a value (see --help)\n", argv[optind - 1]);
        return 2;
      default:
        errmsg("unknown option '%s' (see --help)\n", argv[optind - 1]);
        return 2;
    }
    if (rc) return rc;
    if ((c == OPT_KERNELS && !o->include) || (c == OPT_EXCLUDE && !o->exclude)) return bad_arg("--kernels", a, "out of memory");
  }
  if (optind < argc) {
    errmsg("unexpected argument '%s' (see --help)\n", argv[optind]);
    return 2;
  }
  if ((o->nn > 0) != (o->nk_n > 0)) {
    errmsg("--n and --k go together (every N is paired with every K; or use --nk NxK,...)\n");
    return 2;
  }
  if (o->nn > 0 && o->npairs > 0) {
    errmsg("give either --n/--k or --nk, not both\n");
    return 2;
  }
  if (o->eager && o->rounds) {
    errmsg("--eager and --rounds exclude each other: eager launches are timed one kernel at a time (see --help)\n");
    return 2;
  }
#if !W4A16_BENCH_HAVE_JANSSON
  if (o->fmt == FMT_JSON) {
    errmsg("--json: this build has no JSON support (libjansson-dev was not found at configure time)\n");
    return 2;
  }
#endif
  if (o->mode == W4A16_PER_COLUMN_SCALE_ONLY && group_given) {
    errmsg("--group: PER_COLUMN_SCALE_ONLY (--mode pc) has one scale row (the group is K)\n");
    return 2;
  }
  /* problem lists */
  if (o->nm == 0) {
    o->nm = (int)(sizeof DEFAULT_M / sizeof DEFAULT_M[0]);
    o->ms = malloc(sizeof DEFAULT_M);
    if (!o->ms) return 1;
    memcpy(o->ms, DEFAULT_M, sizeof DEFAULT_M);
  }
  if (o->nn > 0) {
    o->npairs = o->nn * o->nk_n;
    o->pairs = calloc((size_t)o->npairs, sizeof *o->pairs);
    if (!o->pairs) return 1;
    for (int i = 0; i < o->nn; ++i)
      for (int j = 0; j < o->nk_n; ++j) o->pairs[i * o->nk_n + j] = (nk_pair){o->ns[i], o->ks[j]};
  } else if (o->npairs == 0) {
    o->npairs = (int)(sizeof DEFAULT_NK / sizeof DEFAULT_NK[0]);
    o->pairs = calloc((size_t)o->npairs, sizeof *o->pairs);
    if (!o->pairs) return 1;
    for (int i = 0; i < o->npairs; ++i) o->pairs[i] = (nk_pair){DEFAULT_NK[i][0], DEFAULT_NK[i][1]};
  }
  /* the packed layout's constraints, and K a whole number of groups (w4a16.h, w4a16_problem) */
  for (int i = 0; i < o->npairs; ++i) {
    const long long n = o->pairs[i].n, k = o->pairs[i].k;
    /* K: whole 64-k blocks and whole groups (the group sizes are powers of two) */
    const int kq = o->mode != W4A16_PER_COLUMN_SCALE_ONLY && o->group > 64 ? o->group : 64;
    if (n % 16 || k % kq || k > W4A16_MAX_K) {
      errmsg("problem N=%lld K=%lld: N must be a multiple of 16, K a multiple of %d and at most %d\n", n, k, kq,
             W4A16_MAX_K);
      return 2;
    }
  }
  return -1;
}

/* ------------------------------------------------------------------------- */
/* Name filters: the semantics of generator/filters.py                       */
/* ------------------------------------------------------------------------- */

/* '*' matches any run of characters; everything else literally; whole name. */
static int glob_match(const char *pat, size_t plen, const char *s) {
  size_t pi = 0, star_pi = (size_t)-1;
  const char *star_s = NULL;
  while (*s) {
    if (pi < plen && pat[pi] == '*') {
      star_pi = pi++;
      star_s = s;
    } else if (pi < plen && pat[pi] == *s) {
      ++pi;
      ++s;
    } else if (star_s) {
      pi = star_pi + 1;
      s = ++star_s;
    } else {
      return 0;
    }
  }
  while (pi < plen && pat[pi] == '*') ++pi;
  return pi == plen;
}

/* any pattern of list (',' or ';' separated, blanks trimmed) matches name; -1 if list has none */
static int list_matches(const char *list, const char *name, int *all) {
  int any = 0;
  if (all) *all = 0;
  const char *p = list;
  while (p && *p) {
    const char *e = p;
    while (*e && *e != ',' && *e != ';') ++e;
    const char *b = p, *f = e;
    while (b < f && (*b == ' ' || *b == '\t')) ++b;
    while (f > b && (f[-1] == ' ' || f[-1] == '\t')) --f;
    if (f > b) {
      any = 1;
      if (all && f - b == 3 && !strncmp(b, "all", 3)) *all = 1;
      if (glob_match(b, (size_t)(f - b), name)) return 1;
    }
    p = *e ? e + 1 : e;
  }
  return any ? 0 : -1;
}

static int name_selected(const bench_opts *o, const char *name) {
  if (o->include) {
    int all = 0, m = list_matches(o->include, name, &all);
    if (m == 0 && !all) return 0;
  }
  if (o->exclude && list_matches(o->exclude, name, NULL) == 1) return 0;
  return 1;
}

/* ------------------------------------------------------------------------- */
/* Output                                                                    */
/* ------------------------------------------------------------------------- */

static const char *mode_short(w4a16_quant_mode m) {
  return m == W4A16_PER_COLUMN_SCALE_ONLY ? "pc" : m == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? "fgsz" : "fgs";
}

/* detail: a per-kernel line, shown only on a terminal (a log gets one line per problem) */
static void progress(bench *b, int detail, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void progress(bench *b, int detail, const char *fmt, ...) {
  if (b->o.quiet || (detail && !b->tty)) return;
  va_list ap;
  va_start(ap, fmt);
  if (b->tty) {
    fputs("\r\033[K", stderr);
    vfprintf(stderr, fmt, ap);
    b->progress_open = 1;
  } else {
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
  }
  va_end(ap);
  fflush(stderr);
}

static void progress_clear(bench *b) {
  if (b->progress_open) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
    b->progress_open = 0;
  }
}

static void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"') fputc('"', f);
    fputc(*s == '\n' ? ' ' : *s, f);
  }
  fputc('"', f);
}

typedef struct problem_summary {
  const w4a16_problem *p; /* -> prob */
  w4a16_problem prob;     /* normalized copy: outlives the timing data */
  double flops, bytes, floor_us;
  const char *bound;
  int copies;
  int have_cublas;
  bench_cublas_result cub;
  double cub_bytes, cub_floor_us;
} problem_summary;

static double floor_us(const bench_opts *o, double bytes, double flops, const char **bound) {
  double mem = bytes / (o->peak_gbps * 1e9) * 1e6, cmp = flops / (o->peak_tflops * 1e12) * 1e6;
  if (bound) *bound = mem >= cmp ? "memory" : "compute";
  return mem >= cmp ? mem : cmp;
}

static void print_text(bench *b, const problem_summary *s, row *rows, int nrows, int nok) {
  FILE *f = b->out;
  const w4a16_problem *p = s->p;
  fprintf(f, "\nM=%lld N=%lld K=%lld %s %s", (long long)p->m, (long long)p->n, (long long)p->k,
          w4a16_dtype_name(p->dtype), mode_short(p->mode));
  if (p->mode != W4A16_PER_COLUMN_SCALE_ONLY) fprintf(f, " g%d", p->group_size);
  if (p->has_bias) fprintf(f, " +bias");
  fprintf(f, ": floor %.1f us (%s-bound; %.1f MB, %.3f TFLOP), %d weight cop%s, %d kernel%s\n", s->floor_us,
          s->bound, s->bytes / 1e6, s->flops / 1e12, s->copies, s->copies == 1 ? "y" : "ies", nrows,
          nrows == 1 ? "" : "s");
  int w = 24;
  for (int i = 0; i < nrows; ++i) {
    int l = (int)strlen(rows[i].kd->name);
    if (l > w) w = l;
  }
  char cubname[96] = "";
  if (b->o.cublas_algos > 0) {
    snprintf(cubname, sizeof cubname, "cuBLASLt %s dense", w4a16_dtype_name(p->dtype));
    if ((int)strlen(cubname) > w) w = (int)strlen(cubname);
  }
  fprintf(f, "  %4s  %-*s %10s %9s %9s %6s %9s%s\n", "rank", w, "kernel", "median_us", "TFLOP/s", "GB/s", "floor",
          "vs_cublas", b->o.eager ? "   host_us" : "");
  const double cub_us = s->have_cublas && s->cub.timing.status == W4A16_STATUS_OK ? s->cub.timing.median_us : 0;
  int shown = b->o.top > 0 && b->o.top < nok ? b->o.top : nok;
  for (int i = 0; i < shown; ++i) {
    const w4a16_timing_result *t = &rows[i].t;
    fprintf(f, "  %4d  %-*s %10.2f %9.2f %9.1f %6.3f", i + 1, w, rows[i].kd->name, t->median_us,
            s->flops / (t->median_us * 1e-6) / 1e12, s->bytes / (t->median_us * 1e-6) / 1e9,
            s->floor_us / t->median_us);
    if (cub_us > 0) fprintf(f, " %8.2fx", cub_us / t->median_us);
    else fprintf(f, " %9s", "-");
    if (b->o.eager) fprintf(f, " %9.2f", t->host_us);
    fputc('\n', f);
  }
  if (shown < nok) fprintf(f, "  %4s  (%d slower kernels not shown; --top)\n", "", nok - shown);
  if (s->have_cublas) {
    const w4a16_timing_result *t = &s->cub.timing;
    if (t->status == W4A16_STATUS_OK) {
      fprintf(f, "  %4s  %-*s %10.2f %9.2f %9.1f %6.3f %8.2fx", "ref", w, cubname, t->median_us,
              s->flops / (t->median_us * 1e-6) / 1e12, s->cub_bytes / (t->median_us * 1e-6) / 1e9,
              s->cub_floor_us / t->median_us, 1.0);
      if (b->o.eager) fprintf(f, " %9.2f", t->host_us);
      fprintf(f, "   (algo %d of %d tried, %d cop%s)\n", s->cub.algo, s->cub.algos_tried, s->cub.copies,
              s->cub.copies == 1 ? "y" : "ies");
    } else {
      fprintf(f, "  %4s  %-*s failed: %s: %s\n", "ref", w, cubname, w4a16_status_name(t->status), t->message);
    }
  }
  for (int i = nok; i < nrows; ++i)
    fprintf(f, "  skipped %s: %s: %s\n", rows[i].kd->name, w4a16_status_name(rows[i].t.status), rows[i].t.message);
  if (nrows == 0) fprintf(f, "  (no registered kernel matches the filters and can implement this problem here)\n");
  fflush(f);
}

static void print_csv(bench *b, const problem_summary *s, row *rows, int nrows, int nok) {
  FILE *f = b->out;
  const w4a16_problem *p = s->p;
  if (!b->csv_header_done) {
    fprintf(f, "m,n,k,dtype,mode,group,bias,rank,kernel,status,median_us,min_us,max_us,tflops,gbps,floor_us,"
               "floor_fraction,vs_cublas,copies,launches_per_replay,host_us,message\n");
    b->csv_header_done = 1;
  }
  const double cub_us = s->have_cublas && s->cub.timing.status == W4A16_STATUS_OK ? s->cub.timing.median_us : 0;
  int shown = b->o.top > 0 && b->o.top < nok ? b->o.top : nok;
  char cubname[64];
  snprintf(cubname, sizeof cubname, "cublasLt_%s_algo%d", w4a16_dtype_name(p->dtype), s->cub.algo);
  int total = nrows + (s->have_cublas ? 1 : 0);
  for (int j = 0; j < total; ++j) {
    int is_cub = j == nrows;
    if (!is_cub && j >= shown && j < nok) continue;
    const w4a16_timing_result *t = is_cub ? &s->cub.timing : &rows[j].t;
    fprintf(f, "%lld,%lld,%lld,%s,%s,%d,%d,", (long long)p->m, (long long)p->n, (long long)p->k,
            w4a16_dtype_name(p->dtype), mode_short(p->mode), p->group_size, p->has_bias ? 1 : 0);
    if (is_cub) fprintf(f, "ref,");
    else if (j < nok) fprintf(f, "%d,", j + 1);
    else fprintf(f, ",");
    csv_field(f, is_cub ? cubname : rows[j].kd->name);
    fprintf(f, ",%s,", w4a16_status_name(t->status));
    if (t->status == W4A16_STATUS_OK) {
      double bytes = is_cub ? s->cub_bytes : s->bytes, fl = is_cub ? s->cub_floor_us : s->floor_us;
      fprintf(f, "%.3f,%.3f,%.3f,%.3f,%.1f,%.3f,%.4f,", t->median_us, t->min_us, t->max_us,
              s->flops / (t->median_us * 1e-6) / 1e12, bytes / (t->median_us * 1e-6) / 1e9, fl, fl / t->median_us);
      if (cub_us > 0) fprintf(f, "%.4f", cub_us / t->median_us);
      fprintf(f, ",%d,%d,", t->copies, t->launches);
      if (b->o.eager) fprintf(f, "%.3f", t->host_us);
      fputc(',', f);
    } else {
      fprintf(f, ",,,,,%.3f,,,%d,,,", is_cub ? s->cub_floor_us : s->floor_us, t->copies);
    }
    csv_field(f, t->message);
    fputc('\n', f);
  }
  fflush(f);
}

#if W4A16_BENCH_HAVE_JANSSON
static json_t *json_timing(const problem_summary *s, const w4a16_timing_result *t, double bytes, double fl,
                           double cub_us, int eager) {
  json_t *o = json_object();
  json_object_set_new(o, "status", json_string(w4a16_status_name(t->status)));
  if (t->status == W4A16_STATUS_OK) {
    json_object_set_new(o, "median_us", json_real(t->median_us));
    json_object_set_new(o, "min_us", json_real(t->min_us));
    json_object_set_new(o, "max_us", json_real(t->max_us));
    json_object_set_new(o, "tflops", json_real(s->flops / (t->median_us * 1e-6) / 1e12));
    json_object_set_new(o, "gbps", json_real(bytes / (t->median_us * 1e-6) / 1e9));
    json_object_set_new(o, "floor_fraction", json_real(fl / t->median_us));
    json_object_set_new(o, "vs_cublas", cub_us > 0 ? json_real(cub_us / t->median_us) : json_null());
    json_object_set_new(o, "launches_per_replay", json_integer(t->launches));
    json_object_set_new(o, "samples", json_integer(t->samples));
    if (eager) json_object_set_new(o, "host_us", json_real(t->host_us));
  } else {
    json_object_set_new(o, "message", json_string(t->message));
  }
  json_object_set_new(o, "copies", json_integer(t->copies));
  return o;
}

static void add_json(bench *b, const problem_summary *s, row *rows, int nrows, int nok) {
  const w4a16_problem *p = s->p;
  json_t *jp = json_object();
  json_object_set_new(jp, "m", json_integer(p->m));
  json_object_set_new(jp, "n", json_integer(p->n));
  json_object_set_new(jp, "k", json_integer(p->k));
  json_object_set_new(jp, "dtype", json_string(w4a16_dtype_name(p->dtype)));
  json_object_set_new(jp, "mode", json_string(w4a16_quant_mode_name(p->mode)));
  json_object_set_new(jp, "group_size", json_integer(p->group_size));
  json_object_set_new(jp, "bias", json_boolean(p->has_bias));
  json_object_set_new(jp, "flops", json_real(s->flops));
  json_object_set_new(jp, "bytes", json_real(s->bytes));
  json_object_set_new(jp, "floor_us", json_real(s->floor_us));
  json_object_set_new(jp, "bound", json_string(s->bound));
  const double cub_us = s->have_cublas && s->cub.timing.status == W4A16_STATUS_OK ? s->cub.timing.median_us : 0;
  if (s->have_cublas) {
    json_t *jc = json_timing(s, &s->cub.timing, s->cub_bytes, s->cub_floor_us, cub_us, b->o.eager);
    json_object_set_new(jc, "bytes", json_real(s->cub_bytes));
    json_object_set_new(jc, "floor_us", json_real(s->cub_floor_us));
    json_object_set_new(jc, "algo", json_integer(s->cub.algo));
    json_object_set_new(jc, "algos_tried", json_integer(s->cub.algos_tried));
    json_object_set_new(jp, "cublas", jc);
  } else {
    json_object_set_new(jp, "cublas", json_null());
  }
  json_t *jr = json_array(), *js = json_array();
  int shown = b->o.top > 0 && b->o.top < nok ? b->o.top : nok;
  for (int i = 0; i < nrows; ++i) {
    if (i >= shown && i < nok) continue;
    json_t *o = json_timing(s, &rows[i].t, s->bytes, s->floor_us, cub_us, b->o.eager);
    json_object_set_new(o, "kernel", json_string(rows[i].kd->name));
    if (i < nok) {
      json_object_set_new(o, "rank", json_integer(i + 1));
      json_array_append_new(jr, o);
    } else {
      json_array_append_new(js, o);
    }
  }
  json_object_set_new(jp, "results", jr);
  json_object_set_new(jp, "skipped", js);
  /* the kernel w4a16_gemm would launch (the heuristic's first pick), so that a report can set it
     against the fastest kernel timed; null where the heuristic has none */
  w4a16_heuristic_result pick;
  int picked = 0;
  if (w4a16_heuristic_query(p, 1, &pick, &picked) == W4A16_STATUS_OK && picked == 1) {
    json_t *jh = json_object();
    json_object_set_new(jh, "kernel", json_string(pick.kernel->name));
    json_object_set_new(jh, "rule", json_string(pick.rule));
    json_object_set_new(jh, "split_k", json_integer(pick.split_k));
    json_object_set_new(jp, "heuristic", jh);
  } else {
    json_object_set_new(jp, "heuristic", json_null());
  }
  json_array_append_new(b->json_problems, jp);
}
#endif

/* ------------------------------------------------------------------------- */
/* Running                                                                   */
/* ------------------------------------------------------------------------- */

static int cmp_rows(const void *pa, const void *pb) {
  const row *a = pa, *b = pb;
  int fa = a->t.status != W4A16_STATUS_OK, fb = b->t.status != W4A16_STATUS_OK;
  if (fa != fb) return fa - fb;
  if (!fa && a->t.median_us != b->t.median_us) return a->t.median_us < b->t.median_us ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

static int candidate(const bench *b, const w4a16_kernel_desc *kd, const w4a16_problem *p, int check_arch) {
  if (!kd || !name_selected(&b->o, kd->name)) return 0;
  if (check_arch && (b->cc < kd->sm_min || b->cc > kd->sm_max)) return 0;
  return w4a16_can_implement(kd, p) == W4A16_STATUS_OK;
}

/* the seed of problem idx's dense cuBLAS weights */
static uint64_t cublas_seed(const bench *b, int idx) { return b->o.seed * 1000003ull + (uint64_t)idx + 77; }

/* --rounds: the n kernels of rows and, with cuBLAS, its algorithms, timed in the same rounds
   (w4a16_timing_data_time_with); rows[i].t and s->cub receive the results. 0 ok, 1 fatal (host memory). */
static int time_in_rounds(bench *b, problem_summary *s, w4a16_timing_data *td, row *rows, int n, int idx, int total,
                          const w4a16_timing_options *to) {
  enum { MAX_CUB = BENCH_CUBLAS_MAX_ALGOS };
  const w4a16_problem *np = s->p;
  const w4a16_kernel_desc **kernels = calloc((size_t)n, sizeof *kernels);
  w4a16_timing_result *res = calloc((size_t)n + MAX_CUB, sizeof *res);
  if (!kernels || !res) {
    free(kernels);
    free(res);
    errmsg("out of host memory\n");
    return 1;
  }
  for (int i = 0; i < n; ++i) kernels[i] = rows[i].kd;
  bench_cublas_set *set = NULL;
  w4a16_timing_candidate cand[MAX_CUB];
  int ncub = 0;
  if (b->cublas) {
    s->have_cublas = 1;
    if (bench_cublas_prepare(b->cublas, np, w4a16_timing_data_a(td), w4a16_timing_data_d(td), b->o.cublas_algos,
                             b->o.rotate_bytes, cublas_seed(b, idx), &set, &s->cub) == W4A16_STATUS_OK)
      ncub = bench_cublas_candidates(set, cand, MAX_CUB);
  }
  progress(b, 1, "[%d/%d] M=%lld N=%lld K=%lld: %d kernel%s%s in rounds", idx, total, (long long)np->m,
           (long long)np->n, (long long)np->k, n, n == 1 ? "" : "s", ncub ? " and cuBLASLt" : "");
  w4a16_status st = w4a16_timing_data_time_with(td, kernels, n, cand, ncub, to, res);
  for (int i = 0; i < n; ++i) {
    rows[i].t = res[i];
    if (st != W4A16_STATUS_OK && rows[i].t.status == W4A16_STATUS_OK) {
      rows[i].t.status = st;
      snprintf(rows[i].t.message, sizeof rows[i].t.message, "%s", w4a16_last_error_message());
    }
  }
  if (set) {
    bench_cublas_pick(set, res + n, ncub, &s->cub);
    bench_cublas_release(set, w4a16_timing_data_stream(td));
  }
  free(kernels);
  free(res);
  return 0;
}

/* 0 ok, 1 fatal */
static int run_problem(bench *b, const w4a16_problem *p, int idx, int total) {
  size_t count = w4a16_kernel_count();
  row *rows = calloc(count ? count : 1, sizeof *rows);
  if (!rows) {
    errmsg("out of host memory\n");
    return 1;
  }
  int n = 0;
  for (size_t i = 0; i < count; ++i) {
    const w4a16_kernel_desc *kd = w4a16_kernel_get(i);
    if (candidate(b, kd, p, 1)) {
      rows[n].kd = kd;
      rows[n].index = i;
      ++n;
    }
  }
  progress(b, 0, "[%d/%d] M=%lld N=%lld K=%lld: preparing inputs (%d kernel%s)", idx, total, (long long)p->m,
           (long long)p->n, (long long)p->k, n, n == 1 ? "" : "s");

  problem_summary s;
  memset(&s, 0, sizeof s);
  w4a16_timing_data *td = NULL;
  w4a16_status st = w4a16_timing_data_create(p, b->o.rotate_bytes, b->o.seed * 1000003ull + (uint64_t)idx, &td);
  if (st != W4A16_STATUS_OK) {
    progress_clear(b);
    errmsg("M=%lld N=%lld K=%lld: cannot prepare the inputs: %s: %s\n", (long long)p->m,
            (long long)p->n, (long long)p->k, w4a16_status_name(st), w4a16_last_error_message());
    free(rows);
    return st == W4A16_STATUS_CUDA_ERROR || st == W4A16_STATUS_OUT_OF_MEMORY || st == W4A16_STATUS_NO_DEVICE ? 1 : 0;
  }
  if (b->o.int_zeros && p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS &&
      (st = w4a16_timing_data_integer_zeros(td, b->o.seed * 1000003ull + (uint64_t)idx + 7)) != W4A16_STATUS_OK) {
    progress_clear(b);
    errmsg("M=%lld N=%lld K=%lld: cannot set integer zeros: %s: %s\n", (long long)p->m, (long long)p->n,
           (long long)p->k, w4a16_status_name(st), w4a16_last_error_message());
    w4a16_timing_data_destroy(td);
    free(rows);
    return 1;
  }
  s.prob = *w4a16_timing_data_problem(td);
  const w4a16_problem *np = &s.prob;
  s.p = np;
  s.flops = w4a16_timing_flops(np);
  s.bytes = w4a16_timing_bytes(np);
  s.floor_us = floor_us(&b->o, s.bytes, s.flops, &s.bound);
  s.copies = w4a16_timing_data_copies(td);
  s.cub_bytes = 2.0 * ((double)np->n * np->k + (double)np->m * np->k + (double)np->m * np->n);
  s.cub_floor_us = floor_us(&b->o, s.cub_bytes, s.flops, NULL);

  w4a16_timing_options to = {b->o.warmup, b->o.iterations, 0, 0, 0, b->o.eager};
  if (b->o.rounds && n > 0) {
    if (time_in_rounds(b, &s, td, rows, n, idx, total, &to)) {
      w4a16_timing_data_destroy(td);
      free(rows);
      return 1;
    }
  } else {
    for (int i = 0; i < n; ++i) {
      progress(b, 1, "[%d/%d] M=%lld N=%lld K=%lld: kernel %d/%d %s", idx, total, (long long)p->m, (long long)p->n,
               (long long)p->k, i + 1, n, rows[i].kd->name);
      w4a16_timing_data_time(td, rows[i].kd, &to, &rows[i].t);
    }
    if (b->cublas) {
      progress(b, 1, "[%d/%d] M=%lld N=%lld K=%lld: cuBLASLt %s", idx, total, (long long)p->m, (long long)p->n,
               (long long)p->k, w4a16_dtype_name(p->dtype));
      s.have_cublas = 1;
      bench_cublas_time(b->cublas, np, w4a16_timing_data_a(td), w4a16_timing_data_d(td), w4a16_timing_data_stream(td),
                        b->o.cublas_algos, b->o.rotate_bytes, cublas_seed(b, idx), &to, &s.cub);
    }
  }
  w4a16_timing_data_destroy(td);
  qsort(rows, (size_t)n, sizeof *rows, cmp_rows);
  int nok = 0;
  while (nok < n && rows[nok].t.status == W4A16_STATUS_OK) ++nok;
  progress_clear(b);
  switch (b->o.fmt) {
    case FMT_TEXT: print_text(b, &s, rows, n, nok); break;
    case FMT_CSV: print_csv(b, &s, rows, n, nok); break;
    case FMT_JSON:
#if W4A16_BENCH_HAVE_JANSSON
      add_json(b, &s, rows, n, nok);
#endif
      break;
  }
  free(rows);
  /* a kernel that faulted leaves the context unusable: stop rather than report garbage */
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    errmsg("the device is in an error state after M=%lld N=%lld K=%lld (%s); stopping\n",
            (long long)p->m, (long long)p->n, (long long)p->k, cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

static void make_problem(const bench_opts *o, int64_t m, nk_pair nk, w4a16_problem *p) {
  memset(p, 0, sizeof *p);
  p->m = m;
  p->n = nk.n;
  p->k = nk.k;
  p->dtype = o->dtype;
  p->mode = o->mode;
  p->group_size = o->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : o->group;
  p->has_bias = o->bias;
}

static int list_only(bench *b) {
  FILE *f = b->out;
  size_t count = w4a16_kernel_count();
  for (int j = 0; j < b->o.npairs; ++j) {
    for (int i = 0; i < b->o.nm; ++i) {
      w4a16_problem p;
      make_problem(&b->o, b->o.ms[i], b->o.pairs[j], &p);
      fprintf(f, "M=%lld N=%lld K=%lld %s %s g%d:", (long long)p.m, (long long)p.n, (long long)p.k,
              w4a16_dtype_name(p.dtype), mode_short(p.mode), p.group_size);
      int n = 0;
      for (size_t k = 0; k < count; ++k) {
        const w4a16_kernel_desc *kd = w4a16_kernel_get(k);
        if (candidate(b, kd, &p, 0)) fprintf(f, "%s %s", n++ ? "," : "", kd->name);
      }
      fprintf(f, "%s\n", n ? "" : " (none)");
    }
  }
  return 0;
}

int w4a16_bench_main(int argc, char **argv) {
  bench b;
  memset(&b, 0, sizeof b);
  g_prog = argc > 0 && argv && argv[0] && argv[0][0] ? argv[0] : PROG;
  {
    const char *slash = strrchr(g_prog, '/');
    if (slash && slash[1]) g_prog = slash + 1;
  }
  int rc = parse_args(argc, argv, &b.o);
  if (rc >= 0) {
    free_opts(&b.o);
    return rc;
  }
  b.out = stdout;
  if (b.o.output) {
    b.out = fopen(b.o.output, "w");
    if (!b.out) {
      errmsg("--output '%s': %s\n", b.o.output, strerror(errno));
      free_opts(&b.o);
      return 2;
    }
  }
  if (b.o.list_only) {
    rc = list_only(&b);
    goto out;
  }

  /* no GPU: one line, exit status 2 */
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev < 1) {
    errmsg("no CUDA GPU is available (%s); nothing to measure\n",
            e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    rc = 2;
    goto out;
  }
  int dev = 0;
  struct cudaDeviceProp prop;
  if ((e = cudaGetDevice(&dev)) != cudaSuccess || (e = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess) {
    errmsg("cannot query the GPU: %s\n", cudaGetErrorString(e));
    rc = 1;
    goto out;
  }
  snprintf(b.device_name, sizeof b.device_name, "%s", prop.name);
  b.cc = prop.major * 10 + prop.minor;
  b.sm_count = prop.multiProcessorCount;
  b.l2 = w4a16_timing_l2_bytes();
  b.tty = isatty(fileno(stderr));
  if (b.o.cublas_algos > 0) {
    char msg[256];
    if (bench_cublas_create(&b.cublas, msg, sizeof msg) != 0) {
      errmsg("cuBLASLt unavailable, no reference column: %s\n", msg);
      b.cublas = NULL;
    }
  }
  const size_t rot = b.o.rotate_bytes ? b.o.rotate_bytes : 4 * b.l2;
  const int warm = b.o.warmup ? b.o.warmup : 5, iters = b.o.iterations ? b.o.iterations : 10;
  const int total = b.o.nm * b.o.npairs;
  if (b.o.fmt == FMT_TEXT) {
    fprintf(b.out, "# w4a16_bench %s on %s (sm_%d, %d SMs, L2 %.1f MB), %zu kernels registered\n",
            w4a16_version_string(), b.device_name, b.cc, b.sm_count, b.l2 / 1e6, w4a16_kernel_count());
    fprintf(b.out,
            "# %s %s%s, %d problems; per kernel: %d warm-up launches, median of %d %s, weights "
            "rotating over >= %.1f MB\n",
            w4a16_dtype_name(b.o.dtype), w4a16_quant_mode_name(b.o.mode), b.o.bias ? " +bias" : "", total, warm,
            iters,
            b.o.eager ? "samples of eager launches (no graph; host_us: the host's time a call)" : "CUDA-graph replays",
            rot / 1e6);
    fprintf(b.out,
            "# floor = max(bytes / %.0f GB/s, flops / %.0f TFLOP/s); floor column = floor / time; vs_cublas = "
            "cuBLASLt time / kernel time\n",
            b.o.peak_gbps, b.o.peak_tflops);
  }
#if W4A16_BENCH_HAVE_JANSSON
  if (b.o.fmt == FMT_JSON) b.json_problems = json_array();
#endif

  int idx = 0;
  rc = 0;
  for (int j = 0; j < b.o.npairs && rc == 0; ++j) {
    for (int i = 0; i < b.o.nm && rc == 0; ++i) {
      w4a16_problem p;
      make_problem(&b.o, b.o.ms[i], b.o.pairs[j], &p);
      rc = run_problem(&b, &p, ++idx, total);
    }
  }
  progress_clear(&b);

#if W4A16_BENCH_HAVE_JANSSON
  if (b.o.fmt == FMT_JSON) {
    json_t *root = json_object();
    json_object_set_new(root, "tool", json_string(PROG));
    json_object_set_new(root, "version", json_string(w4a16_version_string()));
    json_t *jd = json_object();
    json_object_set_new(jd, "name", json_string(b.device_name));
    json_object_set_new(jd, "compute_capability", json_integer(b.cc));
    json_object_set_new(jd, "sm_count", json_integer(b.sm_count));
    json_object_set_new(jd, "l2_bytes", json_integer((json_int_t)b.l2));
    json_object_set_new(root, "device", jd);
    json_t *js = json_object();
    json_object_set_new(js, "dtype", json_string(w4a16_dtype_name(b.o.dtype)));
    json_object_set_new(js, "mode", json_string(w4a16_quant_mode_name(b.o.mode)));
    json_object_set_new(js, "group_size", json_integer(b.o.mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : b.o.group));
    json_object_set_new(js, "bias", json_boolean(b.o.bias));
    json_object_set_new(js, "peak_gbps", json_real(b.o.peak_gbps));
    json_object_set_new(js, "peak_tflops", json_real(b.o.peak_tflops));
    json_object_set_new(js, "warmup", json_integer(warm));
    json_object_set_new(js, "iterations", json_integer(iters));
    json_object_set_new(js, "rotate_min_bytes", json_integer((json_int_t)rot));
    json_object_set_new(js, "seed", json_integer((json_int_t)b.o.seed));
    json_object_set_new(js, "zeros", json_string(b.o.int_zeros ? "int" : "float"));
    json_object_set_new(js, "cublas_algos", json_integer(b.cublas ? b.o.cublas_algos : 0));
    json_object_set_new(js, "rounds", json_boolean(b.o.rounds));
    json_object_set_new(js, "eager", json_boolean(b.o.eager));
    json_object_set_new(js, "kernels", b.o.include ? json_string(b.o.include) : json_null());
    json_object_set_new(js, "exclude", b.o.exclude ? json_string(b.o.exclude) : json_null());
    json_object_set_new(root, "settings", js);
    json_object_set_new(root, "complete", json_boolean(rc == 0));
    json_object_set_new(root, "problems", b.json_problems);
    b.json_problems = NULL;
    json_dumpf(root, b.out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    fputc('\n', b.out);
    json_decref(root);
  }
#endif
  bench_cublas_destroy(b.cublas);

out:
  if (b.out && b.out != stdout) fclose(b.out);
  else fflush(stdout);
  free_opts(&b.o);
  return rc;
}

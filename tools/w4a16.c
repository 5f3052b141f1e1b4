/* w4a16.c - the `w4a16` command: list kernels, tune problems into the config
   cache (and compare the heuristic with the profiler), run the benchmark
   harness, show the library / GPU / cache.

   Exit status: 0 done, 1 a runtime failure (no GPU, CUDA, I/O), 2 bad arguments
   (the message names the argument). Compiled with -DW4A16_CLI_NO_MAIN the file
   only defines w4a16_cli_main(), which the tests call. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "select_internal.h" /* w4a16_heuristic_query_rules: --fit evaluates its own rule table */
#include "w4a16/select.h"
#include "w4a16/w4a16.h"
#include "w4a16_build_config.h"

#if defined(W4A16_HAVE_BENCH) && W4A16_HAVE_BENCH
#include "harness.h"
#endif

int w4a16_cli_main(int argc, char **argv);

#define EXIT_USAGE 2
#define MAX_LIST 64

/* ------------------------------------------------------------------------- */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------- */

static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "w4a16%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(try 'w4a16 %s%s--help')\n", cmd ? cmd : "", cmd ? " " : "");
  return EXIT_USAGE;
}

/* comma-separated patterns; a pattern without '*' matches as a substring */
static int name_matches(const char *filter, const char *name) {
  if (!filter || !*filter) return 1;
  const char *p = filter;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > 0) {
      char buf[256];
      if (len < sizeof buf) {
        memcpy(buf, p, len);
        buf[len] = '\0';
        /* '*' matches any run, the whole name (fnmatch: linear in practice, where a recursive
           matcher backtracked exponentially on runs of '*') */
        if (memchr(p, '*', len) ? fnmatch(buf, name, 0) == 0 : strstr(name, buf) != NULL) return 1;
      }
    }
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

/* positive integers separated by commas, each in [lo, hi]; returns the count or -1 */
static int parse_int_list(const char *s, int64_t lo, int64_t hi, int64_t *out, int max) {
  int n = 0;
  if (!s || !*s) return -1;
  const char *p = s;
  for (;;) {
    if (*p < '0' || *p > '9') return -1;
    errno = 0;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (errno || v < lo || v > hi || n == max) return -1;
    out[n++] = v;
    if (*end == '\0') break;
    if (*end != ',') return -1;
    p = end + 1;
  }
  return n;
}

static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *v) { return parse_int_list(s, lo, hi, v, 1) == 1; }

/* The current device's peak DRAM bandwidth in GB/s as the heuristic sees it (0 = unknown). */
static int current_mem_gbps(void) {
  w4a16_device_info d = {0};
  return w4a16_current_device(&d) == W4A16_STATUS_OK ? d.mem_gbps : 0;
}

static const char *mode_short(w4a16_quant_mode m) {
  switch (m) {
  case W4A16_PER_COLUMN_SCALE_ONLY: return "pc";
  case W4A16_FINEGRAINED_SCALE_ONLY: return "fgs";
  case W4A16_FINEGRAINED_SCALE_AND_ZEROS: return "fgsz";
  }
  return "?";
}

static int parse_mode(const char *s, w4a16_quant_mode *m) {
  for (int i = 0; i <= 2; ++i)
    if (strcmp(s, mode_short((w4a16_quant_mode)i)) == 0 || strcmp(s, w4a16_quant_mode_name((w4a16_quant_mode)i)) == 0) {
      *m = (w4a16_quant_mode)i;
      return 1;
    }
  return 0;
}

static int parse_dtype(const char *s, w4a16_dtype *d) {
  for (int i = 0; i <= 1; ++i)
    if (strcmp(s, w4a16_dtype_name((w4a16_dtype)i)) == 0) {
      *d = (w4a16_dtype)i;
      return 1;
    }
  if (strcmp(s, "fp16") == 0 || strcmp(s, "half") == 0) {
    *d = W4A16_DTYPE_F16;
    return 1;
  }
  return 0;
}

/* getopt_long error reporting shared by the subcommands (optstring starts with ':') */
static int getopt_error(const char *cmd, int c, char **argv) {
  const char *arg = argv[optind - 1];
  if (c == ':') return usage_error(cmd, "option '%s' needs a value", arg);
  if (optopt && optopt != '?') return usage_error(cmd, "unknown option '-%c'", optopt);
  return usage_error(cmd, "unknown option '%s'", arg);
}

/* ------------------------------------------------------------------------- */
/* w4a16 list                                                                */
/* ------------------------------------------------------------------------- */

static void list_help(FILE *f) {
  fprintf(f,
          "usage: w4a16 list [--tsv] [--shape M,N,K [--dtype D] [--mode MODE] [--group G]] [FILTER]\n"
          "\n"
          "List the kernels compiled into this library with their fields.\n"
          "--shape M,N,K (with --dtype f16|bf16, default bf16; --mode pc|fgs|fgsz, default fgs;\n"
          "--group G, default 128, 0 = one group a column): a last column says whether each kernel\n"
          "can implement that problem, or why not (w4a16_can_implement's message).\n"
          "FILTER: comma-separated patterns; '*' matches any run of characters (the whole name\n"
          "must match, as in W4A16_KERNELS), a pattern without '*' matches as a substring.\n"
          "\n"
          "  --tsv     tab-separated values with a header line\n"
          "  --help    this text\n");
}

static int cmd_list(int argc, char **argv) {
  static const struct option opts[] = {{"tsv", no_argument, NULL, 't'},      {"shape", required_argument, NULL, 's'},
                                       {"dtype", required_argument, NULL, 'd'}, {"mode", required_argument, NULL, 'm'},
                                       {"group", required_argument, NULL, 'g'}, {"help", no_argument, NULL, 'h'},
                                       {0, 0, 0, 0}};
  int tsv = 0, c, shape = 0, group_given = 0;
  w4a16_problem prob;
  memset(&prob, 0, sizeof prob);
  prob.dtype = W4A16_DTYPE_BF16;
  prob.mode = W4A16_FINEGRAINED_SCALE_ONLY;
  prob.group_size = 128;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case 't': tsv = 1; break;
    case 's': {
      int64_t v[3];
      if (parse_int_list(optarg, 0, INT32_MAX, v, 3) != 3)
        return usage_error("list", "invalid value '%s' for --shape (M,N,K)", optarg);
      prob.m = v[0];
      prob.n = v[1];
      prob.k = v[2];
      shape = 1;
      break;
    }
    case 'd':
      if (!parse_dtype(optarg, &prob.dtype)) return usage_error("list", "invalid value '%s' for --dtype (f16, bf16)", optarg);
      break;
    case 'm':
      if (!parse_mode(optarg, &prob.mode)) return usage_error("list", "invalid value '%s' for --mode (pc, fgs, fgsz)", optarg);
      break;
    case 'g': {
      int64_t g;
      if (!parse_int(optarg, 0, INT32_MAX, &g)) return usage_error("list", "invalid value '%s' for --group", optarg);
      prob.group_size = (int)g;
      group_given = 1;
      break;
    }
    case 'h': list_help(stdout); return 0;
    default: return getopt_error("list", c, argv);
    }
  }
  if (prob.mode == W4A16_PER_COLUMN_SCALE_ONLY && !group_given) prob.group_size = 0;
  if (argc - optind > 1) return usage_error("list", "unexpected argument '%s' (one FILTER at most)", argv[optind + 1]);
  const char *filter = optind < argc ? argv[optind] : NULL;
  size_t count = w4a16_kernel_count(), shown = 0;
  if (tsv)
    printf("name\tfamily\tarch\tsm_min\tsm_max\tdtype\tmode\ttile_n\ttile_m\ttile_k\tcluster\tschedule\tstages\t"
           "split_k\tthreads\tsmem_bytes\tmin_group%s\n", shape ? "\tcan_implement" : "");
  else
    printf("%-48s %-5s %-6s %-9s %-5s %-5s %-12s %-7s %-12s %3s %5s %4s %7s%s\n", "name", "fam", "arch", "sm", "dtype",
           "mode", "tile NxMxK", "cluster", "schedule", "stg", "split", "thr", "smem", shape ? "  can_implement" : "");
  for (size_t i = 0; i < count; ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!k || !name_matches(filter, k->name)) continue;
    ++shown;
    char tile[32], cluster[32], sm[16];
    snprintf(tile, sizeof tile, "%dx%dx%d", k->tile_n, k->tile_m, k->tile_k);
    snprintf(cluster, sizeof cluster, "%dx%dx%d", k->cluster_n, k->cluster_m, k->cluster_k);
    if (k->sm_max >= 999)
      snprintf(sm, sizeof sm, "%d+", k->sm_min);
    else
      snprintf(sm, sizeof sm, "%d-%d", k->sm_min, k->sm_max);
    /* with --shape: "yes", or why not (the status's name and can_implement's message) */
    char why[600] = "";
    if (shape) {
      const w4a16_status st = w4a16_can_implement(k, &prob);
      if (st == W4A16_STATUS_OK)
        snprintf(why, sizeof why, "%syes", tsv ? "\t" : "  ");
      else
        snprintf(why, sizeof why, "%s%s: %s", tsv ? "\t" : "  ", w4a16_status_name(st), w4a16_last_error_message());
    }
    if (tsv)
      printf("%s\t%s\t%s\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d%s\n", k->name,
             w4a16_family_name(k->family), k->arch, k->sm_min, k->sm_max, w4a16_dtype_name(k->dtype),
             w4a16_quant_mode_name(k->mode), k->tile_n, k->tile_m, k->tile_k, cluster,
             w4a16_schedule_name(k->schedule), k->stages, k->split_k, k->threads, k->smem_bytes, k->min_group, why);
    else
      printf("%-48s %-5s %-6s %-9s %-5s %-5s %-12s %-7s %-12s %3d %5d %4d %7d%s\n", k->name,
             w4a16_family_name(k->family), k->arch, sm, w4a16_dtype_name(k->dtype), mode_short(k->mode), tile, cluster,
             w4a16_schedule_name(k->schedule), k->stages, k->split_k, k->threads, k->smem_bytes, why);
  }
  if (!tsv) printf("%zu of %zu kernels\n", shown, count);
  return 0;
}

/* ------------------------------------------------------------------------- */
/* w4a16 tune                                                                */
/* ------------------------------------------------------------------------- */

typedef struct layer {
  int64_t n, k;
} layer;

static const layer llama3_8b[] = {{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}};
static const layer llama3_70b[] = {{10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}};
static const int64_t default_ms[] = {1, 16, 64, 256, 1024, 4096};
static const int64_t compare_ms[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};

static void tune_help(FILE *f) {
  fprintf(f,
          "usage: w4a16 tune (--m LIST --n LIST --k LIST | --model NAME[,NAME]) [options]\n"
          "       w4a16 tune --compare-heuristic [problem options] [options]\n"
          "\n"
          "Profile every kernel that can implement each problem on the current GPU (w4a16_profile:\n"
          "weights rotated out of L2, warm-up, median of CUDA-graph replays), store the ranking in the\n"
          "config cache (w4a16 info shows where), and print the 10 fastest per problem.\n"
          "\n"
          "problems (the product of M x (N,K)):\n"
          "  --m LIST            M values, e.g. 1,16,64 (default 1,16,64,256,1024,4096)\n"
          "  --n LIST, --k LIST  N and K values (every N with every K)\n"
          "  --model NAME        the linear layers of llama3-8b and/or llama3-70b (comma-separated)\n"
          "  --dtype T           f16 or bf16 (default bf16)\n"
          "  --mode M            pc, fgs or fgsz (or the full names; default fgs)\n"
          "  --group G           32, 64, 128 or 256 (default 128; ignored for pc)\n"
          "options:\n"
          "  --top N             rows printed per problem (default 10)\n"
          "  --warmup N, --iterations N, --seed N   profiler options (0 = its defaults)\n"
          "  --no-store          do not write the config cache\n"
          "  --cache PATH        the config cache file (default: $W4A16_CACHE_PATH, XDG, ~/.cache)\n"
          "  --dump FILE         write every profiled row (with the heuristic's rank and estimate) as TSV\n"
          "  --compare-heuristic for each problem, the heuristic's first pick against the profiled best\n"
          "                      and their ratio, as a markdown table, and the quality bar's verdict; with\n"
          "                      no problem options: the eight default layers x M in 1,2,4,...,4096\n"
          "  --replay FILE       no GPU: re-run the heuristic of this build against the times in FILE (written\n"
          "                      by --dump on the device; its header's sm_count, cc and mem_gbps describe the\n"
          "                      device, a dump without mem_gbps replays as one of unknown bandwidth) and\n"
          "                      print the --compare-heuristic report; for tuning the rule table\n"
          "                      (runtime/select.c) offline\n"
          "  --fit FILE          no GPU: from a --dump FILE, the family order per M range; prints a rule\n"
          "                      table to paste into runtime/select.c and the bar it reaches on FILE\n"
          "  --help              this text\n");
}

typedef struct tune_opts {
  int64_t ms[MAX_LIST], ns[MAX_LIST], ks[MAX_LIST];
  int nm, nn, nk;
  layer layers[MAX_LIST];
  int nlayers;
  w4a16_dtype dtype;
  w4a16_quant_mode mode;
  int group;
  int top;
  int store;
  int compare;
  const char *dump;
  const char *cache;
  const char *replay;
  const char *fit;
  w4a16_profile_options prof;
} tune_opts;

static void print_problem(FILE *f, const w4a16_problem *p) {
  fprintf(f, "M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " %s %s g%d", p->m, p->n, p->k, w4a16_dtype_name(p->dtype),
          mode_short(p->mode), p->group_size);
}

static int find_rank(const w4a16_heuristic_result *h, int nh, const w4a16_kernel_desc *kd) {
  for (int i = 0; i < nh; ++i)
    if (h[i].kernel == kd) return i;
  return -1;
}

typedef struct compare_row {
  w4a16_problem p;
  char pick[160], best[160];
  const char *rule;
  float t_pick, t_best;
  double ratio; /* INFINITY when the pick failed or was not timed */
} compare_row;

/* the markdown table of heuristic pick vs profiled best, and the quality bar's verdict */
static void print_compare(const compare_row *cmp, int ncmp, const char *device, const tune_opts *o) {
  printf("\n## Heuristic first pick vs profiled best (%s, %s %s g%d)\n\n", device, w4a16_dtype_name(o->dtype),
         mode_short(o->mode), o->group);
  printf("| M | N | K | heuristic pick | rule | pick us | profiled best | best us | ratio |\n");
  printf("|---:|---:|---:|---|---|---:|---|---:|---:|\n");
  int within = 0, counted = 0;
  double worst = 0;
  const compare_row *worst_row = NULL;
  for (int i = 0; i < ncmp; ++i) {
    const compare_row *r = &cmp[i];
    if (!r->best[0]) continue;
    ++counted;
    if (r->ratio <= 1.10) ++within;
    if (r->ratio > worst) {
      worst = r->ratio;
      worst_row = r;
    }
    const char *em = r->ratio > 1.10 ? "**" : ""; /* markdown bold for a pick beyond the bar */
    printf("| %" PRId64 " | %" PRId64 " | %" PRId64 " | %s | %s | %.2f | %s | %.2f | %s%.3f%s |\n", r->p.m, r->p.n,
           r->p.k, r->pick[0] ? r->pick : "(none)", r->rule, r->t_pick, r->best, r->t_best, em, r->ratio, em);
  }
  double frac = counted ? (double)within / counted : 0;
  int pass = counted > 0 && frac >= 0.90 && worst <= 1.5;
  printf("\nwithin 10%% of the best: %d of %d (%.1f%%); worst ratio %.3f", within, counted, 100 * frac, worst);
  if (worst_row) printf(" at M=%" PRId64 " N=%" PRId64 " K=%" PRId64, worst_row->p.m, worst_row->p.n, worst_row->p.k);
  printf("\nquality bar (>= 90%% within 1.10x, none above 1.5x): %s\n", pass ? "PASS" : "FAIL");
}

static int replay(const tune_opts *o);
static int fit(const tune_opts *o);

static int cmd_tune(int argc, char **argv) {
  enum { O_M = 256, O_N, O_K, O_MODEL, O_DTYPE, O_MODE, O_GROUP, O_TOP, O_WARMUP, O_ITERS, O_SEED, O_NOSTORE, O_CACHE,
         O_DUMP, O_COMPARE, O_REPLAY, O_FIT, O_HELP };
  static const struct option opts[] = {
      {"m", required_argument, NULL, O_M},           {"n", required_argument, NULL, O_N},
      {"k", required_argument, NULL, O_K},           {"model", required_argument, NULL, O_MODEL},
      {"dtype", required_argument, NULL, O_DTYPE},   {"mode", required_argument, NULL, O_MODE},
      {"group", required_argument, NULL, O_GROUP},   {"top", required_argument, NULL, O_TOP},
      {"warmup", required_argument, NULL, O_WARMUP}, {"iterations", required_argument, NULL, O_ITERS},
      {"seed", required_argument, NULL, O_SEED},     {"no-store", no_argument, NULL, O_NOSTORE},
      {"cache", required_argument, NULL, O_CACHE},   {"dump", required_argument, NULL, O_DUMP},
      {"compare-heuristic", no_argument, NULL, O_COMPARE}, {"replay", required_argument, NULL, O_REPLAY},
      {"fit", required_argument, NULL, O_FIT},
      {"help", no_argument, NULL, O_HELP},           {0, 0, 0, 0}};
  tune_opts o;
  memset(&o, 0, sizeof o);
  o.dtype = W4A16_DTYPE_BF16;
  o.mode = W4A16_FINEGRAINED_SCALE_ONLY;
  o.group = 128;
  o.top = 10;
  o.store = 1;
  int c;
  int64_t v;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case O_M:
      if ((o.nm = parse_int_list(optarg, 1, INT32_MAX, o.ms, MAX_LIST)) < 0)
        return usage_error("tune", "invalid value '%s' for --m (positive integers separated by commas)", optarg);
      break;
    case O_N:
      if ((o.nn = parse_int_list(optarg, 1, INT32_MAX, o.ns, MAX_LIST)) < 0)
        return usage_error("tune", "invalid value '%s' for --n (positive integers separated by commas)", optarg);
      break;
    case O_K:
      if ((o.nk = parse_int_list(optarg, 1, INT32_MAX, o.ks, MAX_LIST)) < 0)
        return usage_error("tune", "invalid value '%s' for --k (positive integers separated by commas)", optarg);
      break;
    case O_MODEL: {
      char buf[256];
      if (strlen(optarg) >= sizeof buf) return usage_error("tune", "invalid value for --model (too long)");
      strcpy(buf, optarg);
      char *save = NULL;
      for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        const layer *ls = NULL;
        if (strcmp(t, "llama3-8b") == 0) ls = llama3_8b;
        else if (strcmp(t, "llama3-70b") == 0) ls = llama3_70b;
        else return usage_error("tune", "unknown model '%s' for --model (llama3-8b, llama3-70b)", t);
        for (int i = 0; i < 4 && o.nlayers < MAX_LIST; ++i) o.layers[o.nlayers++] = ls[i];
      }
      if (o.nlayers == 0) return usage_error("tune", "invalid value '%s' for --model (llama3-8b, llama3-70b)", optarg);
      break;
    }
    case O_DTYPE:
      if (!parse_dtype(optarg, &o.dtype)) return usage_error("tune", "invalid value '%s' for --dtype (f16, bf16)", optarg);
      break;
    case O_MODE:
      if (!parse_mode(optarg, &o.mode)) return usage_error("tune", "invalid value '%s' for --mode (pc, fgs, fgsz)", optarg);
      break;
    case O_GROUP:
      if (!parse_int(optarg, 1, INT32_MAX, &v) || (v != 32 && v != 64 && v != 128 && v != 256))
        return usage_error("tune", "invalid value '%s' for --group (32, 64, 128, 256)", optarg);
      o.group = (int)v;
      break;
    case O_TOP:
      if (!parse_int(optarg, 1, 100000, &v)) return usage_error("tune", "invalid value '%s' for --top (>= 1)", optarg);
      o.top = (int)v;
      break;
    case O_WARMUP:
      if (!parse_int(optarg, 0, 1000000, &v)) return usage_error("tune", "invalid value '%s' for --warmup", optarg);
      o.prof.warmup = (int)v;
      break;
    case O_ITERS:
      if (!parse_int(optarg, 0, 1000000, &v)) return usage_error("tune", "invalid value '%s' for --iterations", optarg);
      o.prof.iterations = (int)v;
      break;
    case O_SEED:
      if (!parse_int(optarg, 0, UINT32_MAX, &v)) return usage_error("tune", "invalid value '%s' for --seed", optarg);
      o.prof.seed = (unsigned)v;
      break;
    case O_NOSTORE: o.store = 0; break;
    case O_CACHE:
      if (!*optarg) return usage_error("tune", "invalid value '' for --cache (a file path)");
      o.cache = optarg;
      break;
    case O_DUMP:
      if (!*optarg) return usage_error("tune", "invalid value '' for --dump (a file path)");
      o.dump = optarg;
      break;
    case O_COMPARE: o.compare = 1; break;
    case O_FIT:
      if (!*optarg) return usage_error("tune", "invalid value '' for --fit (a file written by --dump)");
      o.fit = optarg;
      break;
    case O_REPLAY:
      if (!*optarg) return usage_error("tune", "invalid value '' for --replay (a file written by --dump)");
      o.replay = optarg;
      break;
    case 'h':
    case O_HELP: tune_help(stdout); return 0;
    default: return getopt_error("tune", c, argv);
    }
  }
  if (optind < argc) return usage_error("tune", "unexpected argument '%s'", argv[optind]);
  if (o.replay && o.fit) return usage_error("tune", "--replay and --fit exclude each other");
  if (o.replay && (o.nm || o.nn || o.nk || o.nlayers || o.dump || !o.store || o.cache))
    return usage_error("tune", "--replay takes no --m, --n, --k, --model, --dump, --cache or --no-store");
  if (o.fit && (o.nm || o.nn || o.nk || o.nlayers || o.dump || !o.store || o.cache))
    return usage_error("tune", "--fit takes no --m, --n, --k, --model, --dump, --cache or --no-store");
  if (o.fit) return fit(&o);
  if ((o.nn > 0) != (o.nk > 0)) return usage_error("tune", "%s", o.nn ? "--n needs --k" : "--k needs --n");
  if (o.nn > 0 && o.nlayers > 0) return usage_error("tune", "--model and --n/--k exclude each other");
  if (o.nn > 0)
    for (int i = 0; i < o.nn; ++i)
      for (int j = 0; j < o.nk; ++j) {
        if (o.nlayers == MAX_LIST) return usage_error("tune", "too many (N,K) pairs in --n x --k (at most %d)", MAX_LIST);
        o.layers[o.nlayers].n = o.ns[i];
        o.layers[o.nlayers++].k = o.ks[j];
      }
  if (o.nlayers == 0 && !o.replay) {
    if (!o.compare) return usage_error("tune", "no problems: give --n and --k, or --model");
    for (int i = 0; i < 4; ++i) o.layers[o.nlayers++] = llama3_8b[i];
    for (int i = 0; i < 4; ++i) o.layers[o.nlayers++] = llama3_70b[i];
  }
  if (o.nm == 0 && !o.replay) {
    const int64_t *ms = o.compare ? compare_ms : default_ms;
    o.nm = o.compare ? (int)(sizeof compare_ms / sizeof *ms) : (int)(sizeof default_ms / sizeof *ms);
    memcpy(o.ms, ms, (size_t)o.nm * sizeof *ms);
  }
  if (o.mode == W4A16_PER_COLUMN_SCALE_ONLY) o.group = 0;
  if (o.replay) return replay(&o);
  if (o.cache && setenv("W4A16_CACHE_PATH", o.cache, 1) != 0) {
    fprintf(stderr, "w4a16 tune: cannot set the cache path: %s\n", strerror(errno));
    return 1;
  }

  /* the GPU */
  int ndev = 0;
  cudaError_t ce = cudaGetDeviceCount(&ndev);
  if (ce != cudaSuccess || ndev < 1) {
    fprintf(stderr, "w4a16 tune: no CUDA GPU is available (%s)\n",
            ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
    return 1;
  }
  w4a16_cache_env env;
  if (w4a16_cache_env_current(&env) != W4A16_STATUS_OK) {
    fprintf(stderr, "w4a16 tune: %s\n", w4a16_last_error_message());
    return 1;
  }
  w4a16_config_cache *cache = o.store ? w4a16_config_cache_default() : NULL;
  if (o.store && !cache) {
    fprintf(stderr, "w4a16 tune: no config cache could be opened (see the warning above); use --no-store\n");
    return 1;
  }
  FILE *dump = NULL;
  if (o.dump && !(dump = fopen(o.dump, "w"))) {
    fprintf(stderr, "w4a16 tune: --dump '%s': %s\n", o.dump, strerror(errno));
    return 1;
  }
  if (dump) {
    fprintf(dump, "# w4a16 tune --dump\tdevice=%s\tsm_count=%d\tcc=%d\tmem_gbps=%d\tlibrary=%s\n", env.device_name,
            env.sm_count, env.cc, current_mem_gbps(), w4a16_version_string());
    fprintf(dump, "m\tn\tk\tgroup\tmode\tdtype\tkernel\tfamily\ttile_n\ttile_m\ttile_k\tcluster\tschedule\tstages\t"
                  "status\tmedian_us\ttflops\tgbps\theur_rank\theur_rule\theur_est_us\tsplit_k\twaves_eff\n");
  }

  size_t count = w4a16_kernel_count();
  int cap = count > 0 ? (int)count : 1;
  w4a16_profile_result *rows = calloc((size_t)cap, sizeof *rows);
  w4a16_heuristic_result *heur = calloc((size_t)cap, sizeof *heur);
  int total = o.nm * o.nlayers;
  compare_row *cmp = calloc((size_t)total, sizeof *cmp);
  if (!rows || !heur || !cmp) {
    fprintf(stderr, "w4a16 tune: out of memory\n");
    free(rows);
    free(heur);
    free(cmp);
    if (dump) fclose(dump);
    return 1;
  }
  printf("# w4a16 tune: %s (sm_%d, %d SMs, CUDA runtime %d), library %s, %zu kernels\n", env.device_name, env.cc,
         env.sm_count, env.cuda_runtime, w4a16_version_string(), count);
  if (cache) printf("# config cache: %s\n", w4a16_config_cache_path(cache));

  int rc = 0, idx = 0, ncmp = 0, failures = 0;
  for (int li = 0; li < o.nlayers; ++li) {
    for (int mi = 0; mi < o.nm; ++mi) {
      w4a16_problem p;
      memset(&p, 0, sizeof p);
      p.m = o.ms[mi];
      p.n = o.layers[li].n;
      p.k = o.layers[li].k;
      p.group_size = o.group;
      p.mode = o.mode;
      p.dtype = o.dtype;
      ++idx;
      fprintf(stderr, "[%d/%d] ", idx, total);
      print_problem(stderr, &p);
      fprintf(stderr, ": profiling...");
      fflush(stderr);
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      int nh = 0;
      w4a16_status hs = w4a16_heuristic_query(&p, cap, heur, &nh);
      if (hs != W4A16_STATUS_OK) nh = 0;
      int n = 0;
      w4a16_status st = o.store ? w4a16_tune(&p, &o.prof, rows, cap, &n) : w4a16_profile(&p, &o.prof, rows, cap, &n);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
      int ran = 0;
      for (int i = 0; i < n; ++i) ran += rows[i].status == W4A16_STATUS_OK;
      if (st != W4A16_STATUS_OK && ran == 0) {
        fprintf(stderr, " failed: %s: %s\n", w4a16_status_name(st), w4a16_last_error_message());
        printf("\n## ");
        print_problem(stdout, &p);
        printf("\nfailed: %s: %s\n", w4a16_status_name(st), w4a16_last_error_message());
        ++failures;
        if (st == W4A16_STATUS_NO_DEVICE || st == W4A16_STATUS_CUDA_ERROR || st == W4A16_STATUS_OUT_OF_MEMORY) {
          rc = 1;
          goto done;
        }
        continue;
      }
      fprintf(stderr, " %d of %d ran (%.1f s)%s\n", ran, n, secs,
              st == W4A16_STATUS_IO_ERROR ? " - not stored: config cache write failed" : "");
      if (st == W4A16_STATUS_IO_ERROR) fprintf(stderr, "  %s\n", w4a16_last_error_message());

      if (dump)
        for (int i = 0; i < n; ++i) {
          const w4a16_kernel_desc *k = rows[i].kernel;
          if (!k) continue;
          int r = find_rank(heur, nh, k);
          fprintf(dump,
                  "%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%dx%dx%d\t%s\t%d\t%s\t%.4f\t%.2f\t"
                  "%.1f\t%d\t%s\t%.3f\t%d\t%.3f\n",
                  p.m, p.n, p.k, p.group_size, mode_short(p.mode), w4a16_dtype_name(p.dtype), k->name,
                  w4a16_family_name(k->family), k->tile_n, k->tile_m, k->tile_k, k->cluster_n, k->cluster_m,
                  k->cluster_k, w4a16_schedule_name(k->schedule), k->stages, w4a16_status_name(rows[i].status),
                  rows[i].median_us, rows[i].tflops, rows[i].gbps, r >= 0 ? r + 1 : 0, r >= 0 ? heur[r].rule : "-",
                  r >= 0 ? heur[r].estimated_us : 0.0f, r >= 0 ? heur[r].split_k : 0,
                  r >= 0 ? heur[r].waves_efficiency : 0.0f);
        }

      if (o.compare) {
        compare_row *cr = &cmp[ncmp++];
        cr->p = p;
        if (rows[0].status == W4A16_STATUS_OK && rows[0].kernel)
          snprintf(cr->best, sizeof cr->best, "%s", rows[0].kernel->name);
        cr->t_best = rows[0].median_us;
        if (nh > 0) snprintf(cr->pick, sizeof cr->pick, "%s", heur[0].kernel->name);
        cr->rule = nh > 0 ? heur[0].rule : "-";
        cr->ratio = INFINITY;
        for (int i = 0; i < n; ++i)
          if (nh > 0 && rows[i].kernel == heur[0].kernel && rows[i].status == W4A16_STATUS_OK) {
            cr->t_pick = rows[i].median_us;
            if (cr->t_best > 0) cr->ratio = cr->t_pick / cr->t_best;
          }
        continue;
      }

      printf("\n## ");
      print_problem(stdout, &p);
      printf(": %d candidates, %d ran%s\n", n, ran, o.store && st == W4A16_STATUS_OK ? ", stored" : "");
      printf("%4s  %-48s %-12s %-7s %-12s %3s %10s %8s %8s %5s\n", "rank", "kernel", "tile NxMxK", "cluster", "schedule",
             "stg", "time_us", "TFLOP/s", "GB/s", "heur");
      int shown = 0;
      for (int i = 0; i < n && shown < o.top; ++i) {
        const w4a16_kernel_desc *k = rows[i].kernel;
        if (!k) continue;
        char tile[32], cluster[32];
        snprintf(tile, sizeof tile, "%dx%dx%d", k->tile_n, k->tile_m, k->tile_k);
        snprintf(cluster, sizeof cluster, "%dx%dx%d", k->cluster_n, k->cluster_m, k->cluster_k);
        int r = find_rank(heur, nh, k);
        if (rows[i].status == W4A16_STATUS_OK)
          printf("%4d  %-48s %-12s %-7s %-12s %3d %10.2f %8.1f %8.0f %5d\n", shown + 1, k->name, tile, cluster,
                 w4a16_schedule_name(k->schedule), k->stages, rows[i].median_us, rows[i].tflops, rows[i].gbps,
                 r >= 0 ? r + 1 : 0);
        else
          printf("%4s  %-48s %-12s %-7s %-12s %3d %10s (%s)\n", "-", k->name, tile, cluster,
                 w4a16_schedule_name(k->schedule), k->stages, "failed", w4a16_status_name(rows[i].status));
        ++shown;
      }
    }
  }

  if (o.compare && ncmp > 0) print_compare(cmp, ncmp, env.device_name, &o);
  if (failures) fprintf(stderr, "w4a16 tune: %d of %d problems could not be profiled\n", failures, total);
done:
  free(rows);
  free(heur);
  free(cmp);
  if (dump && fclose(dump) != 0) {
    fprintf(stderr, "w4a16 tune: --dump '%s': %s\n", o.dump, strerror(errno));
    rc = 1;
  }
  return rc;
}

/* ------------------------------------------------------------------------- */
/* w4a16 tune --replay: the heuristic against recorded times, no GPU         */
/* ------------------------------------------------------------------------- */

typedef struct replay_row {
  char kernel[160];
  float us;
} replay_row;

typedef struct replay_problem {
  w4a16_problem p;
  replay_row *rows;
  int n, cap;
} replay_problem;

typedef struct dump_data {
  replay_problem *probs;
  int np, sm, cc;
  int mem_gbps; /* the header's mem_gbps= (0 when the header has none) */
  char device[256];
} dump_data;

static void dump_free(dump_data *d) {
  for (int i = 0; i < d->np; ++i) free(d->probs[i].rows);
  free(d->probs);
  memset(d, 0, sizeof *d);
}

/* split a line at tabs in place; returns the field count */
static int split_fields(char *line, char **f, int max) {
  int n = 0;
  char *p = line;
  while (n < max) {
    f[n++] = p;
    char *t = strchr(p, '\t');
    if (!t) break;
    *t = '\0';
    p = t + 1;
  }
  return n;
}

/* reads a --dump file: 0, 1 (I/O, memory) or 2 (not a dump), with a message */
static int load_dump(const char *path, const char *opt, dump_data *d) {
  memset(d, 0, sizeof *d);
  snprintf(d->device, sizeof d->device, "?");
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "w4a16 tune: %s '%s': %s\n", opt, path, strerror(errno));
    return 1;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int lineno = 0, rc = 0, pcap = 0;
  while ((len = getline(&line, &cap, f)) >= 0) {
    ++lineno;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    char *fl[32];
    if (line[0] == '#') {
      int nf = split_fields(line, fl, 32);
      /* the device line's integer fields: name, smallest value, what a bad value is not, where it goes */
      const struct { const char *name; int64_t lo; const char *what; int *out; } ints[] = {
          {"sm_count", 1, "a positive integer", &d->sm},
          {"cc", 1, "a positive integer", &d->cc},
          {"mem_gbps", 0, "a bandwidth in GB/s (>= 0)", &d->mem_gbps}};
      for (int i = 1; i < nf && rc == 0; ++i) {
        if (strncmp(fl[i], "device=", 7) == 0) snprintf(d->device, sizeof d->device, "%s", fl[i] + 7);
        for (size_t j = 0; j < sizeof ints / sizeof ints[0]; ++j) {
          const size_t nlen = strlen(ints[j].name);
          if (strncmp(fl[i], ints[j].name, nlen) != 0 || fl[i][nlen] != '=') continue;
          const char *val = fl[i] + nlen + 1;
          int64_t v;
          if (!parse_int(val, ints[j].lo, INT32_MAX, &v)) {
            fprintf(stderr, "w4a16 tune: %s '%s' line %d: %s '%s' is not %s\n", opt, path, lineno, ints[j].name, val,
                    ints[j].what);
            rc = 2;
            break;
          }
          *ints[j].out = (int)v;
        }
      }
      if (rc != 0) break;
      continue;
    }
    if (strncmp(line, "m\t", 2) == 0 || !line[0]) continue;
    int nf = split_fields(line, fl, 32);
    int64_t m, n, k, g;
    w4a16_quant_mode mode;
    w4a16_dtype dt;
    if (nf < 16 || !parse_int(fl[0], 1, INT32_MAX, &m) || !parse_int(fl[1], 1, INT32_MAX, &n) ||
        !parse_int(fl[2], 1, INT32_MAX, &k) || !parse_int(fl[3], 0, INT32_MAX, &g) || !parse_mode(fl[4], &mode) ||
        !parse_dtype(fl[5], &dt)) {
      fprintf(stderr, "w4a16 tune: %s '%s' line %d: not a --dump row\n", opt, path, lineno);
      rc = 2;
      break;
    }
    replay_problem *rp = d->np ? &d->probs[d->np - 1] : NULL;
    if (!rp || rp->p.m != m || rp->p.n != n || rp->p.k != k || rp->p.group_size != g || rp->p.mode != mode ||
        rp->p.dtype != dt) {
      if (d->np == pcap) {
        pcap = pcap ? 2 * pcap : 64;
        replay_problem *q = realloc(d->probs, (size_t)pcap * sizeof *q);
        if (!q) {
          rc = 1;
          break;
        }
        d->probs = q;
      }
      rp = &d->probs[d->np++];
      memset(rp, 0, sizeof *rp);
      rp->p.m = m;
      rp->p.n = n;
      rp->p.k = k;
      rp->p.group_size = (int)g;
      rp->p.mode = mode;
      rp->p.dtype = dt;
    }
    if (w4a16_check_problem(&rp->p) != W4A16_STATUS_OK) {
      fprintf(stderr, "w4a16 tune: %s '%s' line %d: %s\n", opt, path, lineno, w4a16_last_error_message());
      rc = 2;
      break;
    }
    if (strcmp(fl[14], "W4A16_STATUS_OK") != 0) continue;
    char *end;
    const double us = strtod(fl[15], &end);
    if (end == fl[15] || *end || !isfinite(us) || !(us > 0) || us > 3.4e38) {
      fprintf(stderr, "w4a16 tune: %s '%s' line %d: time '%s' is not a number of microseconds > 0\n", opt, path,
              lineno, fl[15]);
      rc = 2;
      break;
    }
    if (rp->n == rp->cap) {
      rp->cap = rp->cap ? 2 * rp->cap : 64;
      replay_row *q = realloc(rp->rows, (size_t)rp->cap * sizeof *q);
      if (!q) {
        rc = 1;
        break;
      }
      rp->rows = q;
    }
    snprintf(rp->rows[rp->n].kernel, sizeof rp->rows[rp->n].kernel, "%s", fl[6]);
    rp->rows[rp->n++].us = (float)us;
  }
  free(line);
  fclose(f);
  if (rc == 0 && (d->sm <= 0 || d->cc <= 0)) {
    fprintf(stderr, "w4a16 tune: %s '%s': no '# ... sm_count=.. cc=..' line (not written by --dump?)\n", opt, path);
    rc = 2;
  }
  if (rc == 0 && d->np == 0) {
    fprintf(stderr, "w4a16 tune: %s '%s': no rows\n", opt, path);
    rc = 2;
  }
  if (rc) dump_free(d);
  return rc;
}

/* the registry as a table the heuristic can take (a copy) */
static w4a16_kernel_desc *registry_copy(size_t *count) {
  *count = w4a16_kernel_count();
  w4a16_kernel_desc *t = calloc(*count ? *count : 1, sizeof *t);
  for (size_t i = 0; t && i < *count; ++i) t[i] = *w4a16_kernel_get(i);
  return t;
}

/* runs the heuristic (rules, or the built-in table when NULL) on every recorded problem
   and prints the comparison; returns the number of problems within 10% */
static int evaluate(const dump_data *d, const w4a16_heuristic_rule *rules, size_t nrules, const tune_opts *o,
                    const char *what) {
  size_t count;
  w4a16_kernel_desc *table = registry_copy(&count);
  compare_row *cmp = calloc((size_t)d->np, sizeof *cmp);
  if (!table || !cmp) {
    free(table);
    free(cmp);
    return -1;
  }
  int missing = 0, within = 0;
  for (int i = 0; i < d->np; ++i) {
    compare_row *cr = &cmp[i];
    const replay_problem *rp = &d->probs[i];
    cr->p = rp->p;
    cr->ratio = INFINITY;
    cr->rule = "-";
    for (int j = 0; j < rp->n; ++j)
      if (!cr->best[0] || rp->rows[j].us < cr->t_best) {
        snprintf(cr->best, sizeof cr->best, "%s", rp->rows[j].kernel);
        cr->t_best = rp->rows[j].us;
      }
    w4a16_heuristic_result h;
    int nh = 0;
    /* rules NULL: the built-in table */
    const w4a16_heuristic_query_options qo = {.struct_size = sizeof qo, .table = table, .count = count,
                                              .rules = rules, .rule_count = rules ? nrules : 0, .sm_count = d->sm,
                                              .cc = d->cc, .mem_gbps = d->mem_gbps};
    w4a16_status st = w4a16_heuristic_query_ex(&rp->p, &qo, 1, &h, &nh);
    if (st != W4A16_STATUS_OK || nh < 1) continue;
    snprintf(cr->pick, sizeof cr->pick, "%s", h.kernel->name);
    cr->rule = h.rule;
    int found = 0;
    for (int j = 0; j < rp->n; ++j)
      if (strcmp(rp->rows[j].kernel, h.kernel->name) == 0) {
        cr->t_pick = rp->rows[j].us;
        if (cr->t_best > 0) cr->ratio = cr->t_pick / cr->t_best;
        found = 1;
      }
    missing += !found;
    within += cr->ratio <= 1.10;
  }
  tune_opts po = *o;
  po.dtype = d->probs[0].p.dtype;
  po.mode = d->probs[0].p.mode;
  po.group = d->probs[0].p.group_size;
  printf("# %s: %d problems recorded on %s (sm_%d, %d SMs); this build has %zu kernels\n", what, d->np, d->device,
         d->cc, d->sm, count);
  print_compare(cmp, d->np, d->device, &po);
  if (missing)
    printf("%d heuristic picks were not timed in the file (a kernel this build has and the profiled one did not, "
           "or one that failed there): ratio inf\n", missing);
  free(table);
  free(cmp);
  return within;
}

static int replay(const tune_opts *o) {
  dump_data d;
  int rc = load_dump(o->replay, "--replay", &d);
  if (rc) return rc;
  char what[512];
  snprintf(what, sizeof what, "w4a16 tune --replay %s (the built-in rule table)", o->replay);
  rc = evaluate(&d, NULL, 0, o, what) < 0 ? 1 : 0;
  dump_free(&d);
  return rc;
}

/* ------------------------------------------------------------------------- */
/* w4a16 tune --fit: the family order per M range from a dump                */
/* ------------------------------------------------------------------------- */

#define FIT_FAMILIES 3
#define FIT_BUCKETS 14 /* M buckets 1 .. 8192 */

static int bucket_index(int64_t m) {
  int64_t b = w4a16_cache_m_bucket(m);
  int i = 0;
  while ((1ll << i) < b) ++i;
  return i;
}

static int fit(const tune_opts *o) {
  dump_data d;
  int rc = load_dump(o->fit, "--fit", &d);
  if (rc) return rc;
  /* per bucket and family: sum over problems of log(best of family / best overall);
     a family missing from a problem of the bucket (cannot implement it) is ranked last */
  double score[FIT_BUCKETS][FIT_FAMILIES];
  int present[FIT_BUCKETS][FIT_FAMILIES], problems[FIT_BUCKETS];
  memset(score, 0, sizeof score);
  memset(present, 0, sizeof present);
  memset(problems, 0, sizeof problems);
  for (int i = 0; i < d.np; ++i) {
    const replay_problem *rp = &d.probs[i];
    float best = 0, fam_best[FIT_FAMILIES] = {0, 0, 0};
    for (int j = 0; j < rp->n; ++j) {
      const w4a16_kernel_desc *kd = w4a16_kernel_find(rp->rows[j].kernel);
      if (!kd || (int)kd->family < 0 || (int)kd->family >= FIT_FAMILIES) continue;
      float us = rp->rows[j].us;
      if (us <= 0) continue;
      if (!fam_best[kd->family] || us < fam_best[kd->family]) fam_best[kd->family] = us;
      if (!best || us < best) best = us;
    }
    if (!best) continue;
    int b = bucket_index(rp->p.m);
    ++problems[b];
    for (int f = 0; f < FIT_FAMILIES; ++f)
      if (fam_best[f]) {
        score[b][f] += log(fam_best[f] / best);
        ++present[b][f];
      }
  }
  /* family order per bucket: families present in every problem of the bucket, by score */
  int order[FIT_BUCKETS][FIT_FAMILIES], norder[FIT_BUCKETS];
  for (int b = 0; b < FIT_BUCKETS; ++b) {
    norder[b] = 0;
    for (int f = 0; f < FIT_FAMILIES; ++f)
      if (problems[b] && present[b][f] == problems[b]) order[b][norder[b]++] = f;
    for (int x = 1; x < norder[b]; ++x)
      for (int y = x; y > 0 && score[b][order[b][y]] < score[b][order[b][y - 1]]; --y) {
        int t = order[b][y];
        order[b][y] = order[b][y - 1];
        order[b][y - 1] = t;
      }
  }
  /* merge consecutive measured buckets with the same order into M ranges */
  static w4a16_heuristic_rule rules[160];
  static char names[64][48];
  size_t nr = 0;
  int64_t lo = 1;
  int last_b = -1;
  printf("# w4a16 tune --fit %s: family order per M range on %s (sm_%d, %d SMs)\n", o->fit, d.device, d.cc, d.sm);
  printf("# (geometric-mean slowdown of each family's best kernel against the best, per M bucket)\n");
  for (int b = 0; b < FIT_BUCKETS; ++b) {
    if (!problems[b]) continue;
    printf("#   M bucket %5lld:", 1ll << b);
    for (int x = 0; x < norder[b]; ++x)
      printf(" %s %.3f", w4a16_family_name((w4a16_family)order[b][x]), exp(score[b][order[b][x]] / problems[b]));
    printf("\n");
    int next = b + 1;
    while (next < FIT_BUCKETS && !problems[next]) ++next;
    int same = next < FIT_BUCKETS && norder[next] == norder[b] &&
               memcmp(order[next], order[b], (size_t)norder[b] * sizeof(int)) == 0;
    if (same) continue;
    int64_t hi = next < FIT_BUCKETS ? (1ll << b) : 0;
    for (int x = 0; x < norder[b] && nr < 60; ++x) {
      w4a16_heuristic_rule *r = &rules[nr];
      memset(r, 0, sizeof *r);
      snprintf(names[nr], sizeof names[nr], "fit-m%lld-%s-%s", (long long)lo, hi ? "" : "up",
               w4a16_family_name((w4a16_family)order[b][x]));
      if (hi) snprintf(names[nr], sizeof names[nr], "fit-m%lld-%lld-%s", (long long)lo, (long long)hi,
                       w4a16_family_name((w4a16_family)order[b][x]));
      r->name = names[nr];
      r->m_min = lo;
      r->m_max = hi;
      r->cc_min = r->cc_max = d.cc;
      r->family = order[b][x];
      ++nr;
    }
    lo = (1ll << b) + 1;
    last_b = b;
  }
  (void)last_b;
  /* then the built-in rules, for other devices */
  size_t nb;
  const w4a16_heuristic_rule *builtin = w4a16_heuristic_rules(&nb);
  for (size_t i = 0; i < nb && nr < sizeof rules / sizeof rules[0]; ++i) rules[nr++] = builtin[i];

  printf("\n# rule table to paste into runtime/select.c (g_rules); the fitted rules hold for cc %d only\n", d.cc);
  for (size_t i = 0; i < nr; ++i) {
    const w4a16_heuristic_rule *r = &rules[i];
    const char *fam = r->family == W4A16_FAMILY_GEMV   ? "W4A16_FAMILY_GEMV"
                      : r->family == W4A16_FAMILY_SM90 ? "W4A16_FAMILY_SM90"
                      : r->family == W4A16_FAMILY_SM80 ? "W4A16_FAMILY_SM80"
                                                       : "ANY_FAMILY";
    printf("    {\"%s\", %lld, %lld, %lld, %lld, %lld, %lld, %d, %d, %d, %d, %s, %d, %d, %d, %d, %d, %d, %d, %.2ff, %d, %d, %uu, %d, %d, %d, %d, %uu, %d, %uu, %d, %d},\n",
           r->name, (long long)r->m_min, (long long)r->m_max, (long long)r->n_min, (long long)r->n_max,
           (long long)r->k_min, (long long)r->k_max, r->sm_count_min, r->sm_count_max, r->cc_min, r->cc_max, fam,
           r->tile_m_min, r->tile_m_max, r->tile_n_min, r->tile_n_max, r->stages_min, r->stages_max, r->m_tiles_max,
           r->min_waves_eff, r->tile_k_min, r->tile_k_max, r->modes, r->group_max, r->threads_min, r->threads_max,
           r->cluster_max, r->schedules, r->cluster_min, r->dtypes, r->mem_gbps_min, r->mem_gbps_max);
  }
  printf("\n");
  char what[512];
  snprintf(what, sizeof what, "w4a16 tune --fit %s (the fitted rule table, evaluated on the same file)", o->fit);
  rc = evaluate(&d, rules, nr, o, what) < 0 ? 1 : 0;
  printf("\n");
  snprintf(what, sizeof what, "w4a16 tune --fit %s (the built-in rule table, for comparison)", o->fit);
  if (evaluate(&d, NULL, 0, o, what) < 0) rc = 1;
  dump_free(&d);
  return rc;
}

/* ------------------------------------------------------------------------- */
/* w4a16 bench                                                               */
/* ------------------------------------------------------------------------- */

static int cmd_bench(int argc, char **argv) {
#if defined(W4A16_HAVE_BENCH) && W4A16_HAVE_BENCH
  char prog[] = "w4a16 bench";
  argv[0] = prog;
  return w4a16_bench_main(argc, argv);
#else
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: w4a16 bench [options]\n\nThe benchmark harness; this build of w4a16 was configured without it\n"
             "(bench/ missing or W4A16_BUILD_BENCH=OFF).\n");
      return 0;
    }
  fprintf(stderr, "w4a16 bench: this build has no benchmark harness (bench/ was not built)\n");
  return 1;
#endif
}

/* ------------------------------------------------------------------------- */
/* w4a16 info                                                                */
/* ------------------------------------------------------------------------- */

static void info_help(FILE *f) {
  fprintf(f,
          "usage: w4a16 info\n"
          "\n"
          "Print the library version, the architectures it was built for, the kernels, the present\n"
          "GPU, and the config cache's path and entry count.\n"
          "\n"
          "  --help    this text\n");
}

static int cmd_info(int argc, char **argv) {
  static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    if (c == 'h') {
      info_help(stdout);
      return 0;
    }
    return getopt_error("info", c, argv);
  }
  if (optind < argc) return usage_error("info", "unexpected argument '%s'", argv[optind]);

  printf("library:        w4a16 %s (version number %u)\n", w4a16_version_string(), w4a16_version());
  printf("built for:      %s (W4A16_CUDA_ARCHS=%s)\n", *W4A16_BUILT_ARCHS ? W4A16_BUILT_ARCHS : "(no kernels)",
         W4A16_CUDA_ARCHS_REQUESTED);
  size_t count = w4a16_kernel_count(), fam[3] = {0, 0, 0};
  for (size_t i = 0; i < count; ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (k && k->family >= 0 && k->family <= 2) ++fam[k->family];
  }
  printf("kernels:        %zu (sm80 %zu, sm90 %zu, gemv %zu), registry fingerprint %016" PRIx64 "\n", count, fam[0],
         fam[1], fam[2], w4a16_registry_fingerprint());
  size_t nrules;
  w4a16_heuristic_rules(&nrules);
  printf("heuristic:      %zu rules\n", nrules);

  int ndev = 0, have_gpu = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev < 1) {
    printf("GPU:            none (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    cudaGetLastError();
  } else {
    w4a16_cache_env env;
    int drv = 0, dev = 0;
    cudaDriverGetVersion(&drv);
    cudaGetDevice(&dev);
    if (w4a16_cache_env_current(&env) == W4A16_STATUS_OK) {
      have_gpu = 1;
      printf("GPU:            %d of %d: %s, compute capability %d.%d, %d SMs, %d GB/s peak DRAM bandwidth\n", dev,
             ndev, env.device_name, env.cc / 10, env.cc % 10, env.sm_count, current_mem_gbps());
      printf("CUDA:           runtime %d.%d, driver %d.%d\n", env.cuda_runtime / 1000, env.cuda_runtime % 1000 / 10,
             drv / 1000, drv % 1000 / 10);
      size_t runs = 0;
      for (size_t i = 0; i < count; ++i) {
        const w4a16_kernel_desc *k = w4a16_kernel_get(i);
        if (k && env.cc >= k->sm_min && env.cc <= k->sm_max) ++runs;
      }
      printf("kernels here:   %zu of %zu cover compute capability %d.%d\n", runs, count, env.cc / 10, env.cc % 10);
    } else {
      printf("GPU:            unusable (%s)\n", w4a16_last_error_message());
    }
  }
  char path[PATH_MAX];
  if (w4a16_cache_default_path(path, sizeof path) != W4A16_STATUS_OK) {
    printf("config cache:   none (%s)\n", w4a16_last_error_message());
  } else if (!have_gpu) {
    printf("config cache:   %s (entries not checked: no GPU)\n", path);
  } else {
    w4a16_config_cache *cache = w4a16_config_cache_default();
    FILE *f = fopen(path, "r");
    int exists = f != NULL;
    if (f) fclose(f);
    if (cache)
      printf("config cache:   %s (%s, %zu entries valid for this GPU and build)\n", path,
             exists ? "present" : "not written yet", w4a16_config_cache_size(cache));
    else
      printf("config cache:   %s (cannot be opened: %s)\n", path, w4a16_last_error_message());
  }
  return 0;
}

/* ------------------------------------------------------------------------- */
/* main                                                                      */
/* ------------------------------------------------------------------------- */

static void main_help(FILE *f) {
  fprintf(f,
          "usage: w4a16 <command> [options]\n"
          "\n"
          "commands:\n"
          "  list [FILTER]   the kernels compiled into the library, with their fields\n"
          "  tune            profile problems on the GPU and store the best kernels in the config cache\n"
          "                  (--compare-heuristic: the heuristic's pick against the profiled best)\n"
          "  bench           the benchmark harness over every kernel\n"
          "  info            library version, built architectures, GPU, config cache\n"
          "\n"
          "'w4a16 <command> --help' describes each. --version prints the version.\n"
          "Exit status: 0 done, 1 runtime failure, 2 bad arguments.\n");
}

int w4a16_cli_main(int argc, char **argv) {
  if (argc < 2) {
    main_help(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    main_help(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("w4a16 %s\n", w4a16_version_string());
    return 0;
  }
  if (strcmp(cmd, "list") == 0) return cmd_list(argc - 1, argv + 1);
  if (strcmp(cmd, "tune") == 0) return cmd_tune(argc - 1, argv + 1);
  if (strcmp(cmd, "bench") == 0) return cmd_bench(argc - 1, argv + 1);
  if (strcmp(cmd, "info") == 0) return cmd_info(argc - 1, argv + 1);
  if (cmd[0] == '-') return usage_error(NULL, "unknown option '%s' (a command comes first)", cmd);
  return usage_error(NULL, "unknown command '%s' (list, tune, bench, info)", cmd);
}

#ifndef W4A16_CLI_NO_MAIN
int main(int argc, char **argv) { return w4a16_cli_main(argc, argv); }
#endif

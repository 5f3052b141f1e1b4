/* cache.c - the persisted config cache: (M bucket, N, K, group, mode, dtype) ->
   ranked kernel names, in a versioned text file written atomically under a lock.

   File format (tab-separated, one record per line, '\n' line ends):

     w4a16-config-cache  <format version>
     library             <w4a16 version string>
     fingerprint         <registry fingerprint, 16 hex digits>
     device              <device name>
     sm_count            <multiprocessors>
     cc                  <compute capability, major*10+minor>
     cuda_runtime        <cudaRuntimeGetVersion>
     # ...               comment lines
     entry  <m_bucket> <n> <k> <group> <mode> <dtype> <kernel>[,<kernel>...]
     end    <number of entry lines> <FNV-1a 64 of every byte before this line, 16 hex digits>

   A file whose first line is another format version, or whose header names
   another library, registry, device, SM count, compute capability or CUDA
   runtime is stale; one without its end line is truncated; one whose checksum
   or structure is wrong is corrupt. Each of these is ignored as a whole, with a
   warning. An entry naming a kernel not in the table (or of another dtype or
   mode than its key) is skipped with a warning. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "select_internal.h"

#define MAGIC "w4a16-config-cache"
#define MAX_NAMES 16
#define MAX_FILE_BYTES (64u << 20)
#define MAX_BUCKET 8192

/* ------------------------------------------------------------------------- */
/* Keys and entries                                                          */
/* ------------------------------------------------------------------------- */

typedef struct cache_key {
  int64_t m_bucket, n, k, group;
  int mode, dtype;
} cache_key;

typedef struct cache_entry {
  cache_key key;
  int count;
  const w4a16_kernel_desc *kernels[MAX_NAMES];
  size_t line; /* while a file is read: its line (a later entry of the same key wins) */
} cache_entry;

/* entries sorted by key (key_cmp), each key once: lookups and inserts by binary search, so that a
   file of many entries loads in O(n log n) */
typedef struct entry_list {
  cache_entry *v;
  size_t n, cap;
} entry_list;

struct w4a16_config_cache {
  pthread_mutex_t mu;
  char *path;
  w4a16_cache_env env;
  const w4a16_kernel_desc *table;
  size_t count;
  const w4a16_kernel_desc **by_name; /* table sorted by name */
  entry_list entries;
};

static atomic_uint g_generation;

unsigned w4a16_cache_generation(void) { return atomic_load(&g_generation); }

int64_t w4a16_cache_m_bucket(int64_t m) {
  if (m <= 1) return 1;
  if (m >= MAX_BUCKET) return MAX_BUCKET;
  int64_t b = 1;
  while (b < m) b <<= 1;
  return b;
}

static cache_key key_of(const w4a16_problem *p) {
  cache_key k;
  memset(&k, 0, sizeof k);
  k.m_bucket = w4a16_cache_m_bucket(p->m);
  k.n = p->n;
  k.k = p->k;
  k.group = w4a16_effective_group(p);
  k.mode = (int)p->mode;
  k.dtype = (int)p->dtype;
  return k;
}

/* the inverse of key_of: the key as a problem (m = the M bucket, group_size = the effective group) */
static void problem_of(const cache_key *k, w4a16_problem *p) {
  memset(p, 0, sizeof *p);
  p->m = k->m_bucket;
  p->n = k->n;
  p->k = k->k;
  p->group_size = (int)k->group;
  p->mode = (w4a16_quant_mode)k->mode;
  p->dtype = (w4a16_dtype)k->dtype;
}

static int key_cmp(const cache_key *a, const cache_key *b) {
#define CMP_(f) \
  if (a->f != b->f) return a->f < b->f ? -1 : 1;
  CMP_(dtype) CMP_(mode) CMP_(n) CMP_(k) CMP_(group) CMP_(m_bucket)
#undef CMP_
  return 0;
}

static int entry_cmp(const void *a, const void *b) {
  return key_cmp(&((const cache_entry *)a)->key, &((const cache_entry *)b)->key);
}

static void list_free(entry_list *l) {
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

/* the first position whose key is not below k */
static size_t list_lower(const entry_list *l, const cache_key *k) {
  size_t lo = 0, hi = l->n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (key_cmp(&l->v[mid].key, k) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static cache_entry *list_find(entry_list *l, const cache_key *k) {
  const size_t i = list_lower(l, k);
  return i < l->n && key_cmp(&l->v[i].key, k) == 0 ? &l->v[i] : NULL;
}

/* room for one more entry; 0 on success, -1 out of memory */
static int list_reserve(entry_list *l) {
  if (l->n < l->cap) return 0;
  size_t cap = l->cap ? l->cap * 2 : 32;
  cache_entry *v = realloc(l->v, cap * sizeof *v);
  if (!v) return -1;
  l->v = v;
  l->cap = cap;
  return 0;
}

/* insert (in key order) or replace; 0 on success, -1 out of memory */
static int list_put(entry_list *l, const cache_entry *e) {
  const size_t i = list_lower(l, &e->key);
  if (i < l->n && key_cmp(&l->v[i].key, &e->key) == 0) {
    l->v[i] = *e;
    return 0;
  }
  if (list_reserve(l) != 0) return -1;
  memmove(l->v + i + 1, l->v + i, (l->n - i) * sizeof *l->v);
  l->v[i] = *e;
  ++l->n;
  return 0;
}

static int entry_line_cmp(const void *a, const void *b) {
  const cache_entry *x = a, *y = b;
  const int c = key_cmp(&x->key, &y->key);
  return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

/* entries [first, n) appended in file order: sorted into key order, the last of each key kept
   (the list is empty before first) */
static void list_sort_unique(entry_list *l, size_t first) {
  qsort(l->v + first, l->n - first, sizeof *l->v, entry_line_cmp);
  size_t out = first;
  for (size_t i = first; i < l->n; ++i) {
    if (i + 1 < l->n && key_cmp(&l->v[i].key, &l->v[i + 1].key) == 0) continue;
    l->v[out++] = l->v[i];
  }
  l->n = out;
}

/* ------------------------------------------------------------------------- */
/* Environment and path                                                      */
/* ------------------------------------------------------------------------- */

static void sanitize(char *s) {
  for (; *s; ++s)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f) *s = ' ';
}

w4a16_status w4a16_cache_env_current(w4a16_cache_env *env) {
  if (!env) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "env is NULL");
  memset(env, 0, sizeof *env);
  w4a16_device_info dev;
  w4a16_status st = w4a16_current_device(&dev);
  if (st != W4A16_STATUS_OK) return st;
  struct cudaDeviceProp prop;
  cudaError_t e = cudaGetDeviceProperties(&prop, dev.ordinal);
  if (e != cudaSuccess) return w4a16_fail_cuda((int)e, "cudaGetDeviceProperties");
  snprintf(env->device_name, sizeof env->device_name, "%s", prop.name);
  sanitize(env->device_name);
  env->sm_count = dev.sm_count;
  env->cc = dev.cc;
  int rt = 0;
  if ((e = cudaRuntimeGetVersion(&rt)) != cudaSuccess) return w4a16_fail_cuda((int)e, "cudaRuntimeGetVersion");
  env->cuda_runtime = rt;
  env->registry_fingerprint = w4a16_registry_fingerprint();
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_cache_default_path(char *path, size_t size) {
  if (!path) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "path is NULL");
  const char *p = getenv("W4A16_CACHE_PATH");
  int n;
  if (p && *p) {
    n = snprintf(path, size, "%s", p);
  } else if ((p = getenv("XDG_CACHE_HOME")) && *p == '/') {
    n = snprintf(path, size, "%s/w4a16/configs.tsv", p);
  } else {
    const char *home = getenv("HOME");
    char buf[4096];
    struct passwd pw, *res = NULL;
    if ((!home || !*home) && getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res) home = res->pw_dir;
    if (!home || !*home)
      return w4a16_fail(W4A16_STATUS_IO_ERROR,
                        "no config cache path: W4A16_CACHE_PATH, XDG_CACHE_HOME and HOME are unset");
    n = snprintf(path, size, "%s/.cache/w4a16/configs.tsv", home);
  }
  if (n < 0 || (size_t)n >= size)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "the config cache path does not fit in %zu bytes", size);
  return W4A16_STATUS_OK;
}

/* ------------------------------------------------------------------------- */
/* Opening                                                                   */
/* ------------------------------------------------------------------------- */

static int desc_ptr_cmp(const void *a, const void *b) {
  return strcmp((*(const w4a16_kernel_desc *const *)a)->name, (*(const w4a16_kernel_desc *const *)b)->name);
}

static const w4a16_kernel_desc *find_kernel(const w4a16_config_cache *c, const char *name) {
  size_t lo = 0, hi = c->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = strcmp(name, c->by_name[mid]->name);
    if (r == 0) return c->by_name[mid];
    if (r < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

static w4a16_status reload_locked(w4a16_config_cache *c);

w4a16_status w4a16_config_cache_open(const char *path, const w4a16_cache_env *env, const w4a16_kernel_desc *table,
                                     size_t count, w4a16_config_cache **out) {
  if (!out) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "cache (the output pointer) is NULL");
  *out = NULL;
  if (!table && count) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "table is NULL with count %zu", count);
  w4a16_cache_env cur;
  w4a16_status st;
  if (!env) {
    if ((st = w4a16_cache_env_current(&cur)) != W4A16_STATUS_OK) return st;
    env = &cur;
  }
  char def[PATH_MAX];
  if (!path) {
    if ((st = w4a16_cache_default_path(def, sizeof def)) != W4A16_STATUS_OK) return st;
    path = def;
  }
  if (!*path) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "the config cache path is empty");
  if (!table) table = w4a16_registry_table(&count);

  w4a16_config_cache *c = calloc(1, sizeof *c);
  if (!c) return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "config cache");
  c->path = strdup(path);
  c->by_name = malloc((count ? count : 1) * sizeof *c->by_name);
  if (!c->path || !c->by_name) {
    free(c->path);
    free(c->by_name);
    free(c);
    return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "config cache");
  }
  pthread_mutex_init(&c->mu, NULL);
  c->env = *env;
  c->env.device_name[sizeof c->env.device_name - 1] = '\0';
  sanitize(c->env.device_name);
  c->table = table;
  size_t k = 0;
  for (size_t i = 0; i < count; ++i)
    if (table[i].name) c->by_name[k++] = &table[i];
  c->count = k;
  qsort(c->by_name, c->count, sizeof *c->by_name, desc_ptr_cmp);
  reload_locked(c);
  *out = c;
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

void w4a16_config_cache_close(w4a16_config_cache *c) {
  if (!c) return;
  pthread_mutex_destroy(&c->mu);
  list_free(&c->entries);
  free(c->by_name);
  free(c->path);
  free(c);
}

const char *w4a16_config_cache_path(const w4a16_config_cache *c) { return c ? c->path : NULL; }

size_t w4a16_config_cache_size(const w4a16_config_cache *c) {
  if (!c) return 0;
  pthread_mutex_lock((pthread_mutex_t *)&c->mu);
  size_t n = c->entries.n;
  pthread_mutex_unlock((pthread_mutex_t *)&c->mu);
  return n;
}

/* ------------------------------------------------------------------------- */
/* Parsing                                                                   */
/* ------------------------------------------------------------------------- */

typedef enum parse_result { PARSE_OK = 0, PARSE_STALE, PARSE_TRUNCATED, PARSE_CORRUPT, PARSE_NOMEM } parse_result;

static uint64_t fnv1a(const char *p, size_t n) { return w4a16_fnv1a(W4A16_FNV1A_OFFSET, p, n); }

/* strict decimal integer in [lo, hi]: the whole field, no sign games */
static int parse_i64(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *v) {
  if (len == 0 || len > 19) return 0;
  int64_t x = 0;
  size_t i = 0;
  int neg = 0;
  if (s[0] == '-') {
    neg = 1;
    i = 1;
    if (len == 1) return 0;
  }
  for (; i < len; ++i) {
    if (s[i] < '0' || s[i] > '9') return 0;
    if (x > (INT64_MAX - (s[i] - '0')) / 10) return 0; /* out of any range */
    x = x * 10 + (s[i] - '0');
  }
  if (neg) x = -x;
  if (x < lo || x > hi) return 0;
  *v = x;
  return 1;
}

static int parse_hex64(const char *s, size_t len, uint64_t *v) {
  if (len != 16) return 0;
  uint64_t x = 0;
  for (size_t i = 0; i < len; ++i) {
    int d;
    if (s[i] >= '0' && s[i] <= '9')
      d = s[i] - '0';
    else if (s[i] >= 'a' && s[i] <= 'f')
      d = s[i] - 'a' + 10;
    else
      return 0;
    x = (x << 4) | (uint64_t)d;
  }
  *v = x;
  return 1;
}

/* split line [s, s+len) at tabs into at most max fields; returns the count, or -1 if more */
typedef struct field {
  const char *s;
  size_t len;
} field;

static int split_tabs(const char *s, size_t len, field *f, int max) {
  int n = 0;
  size_t start = 0;
  for (size_t i = 0; i <= len; ++i) {
    if (i == len || s[i] == '\t') {
      if (n == max) return -1;
      f[n].s = s + start;
      f[n].len = i - start;
      ++n;
      start = i + 1;
    }
  }
  return n;
}

static int field_is(const field *f, const char *lit) {
  size_t n = strlen(lit);
  return f->len == n && memcmp(f->s, lit, n) == 0;
}

static int parse_mode(const field *f, int *mode) {
  for (int m = 0; m <= 2; ++m)
    if (field_is(f, w4a16_quant_mode_name((w4a16_quant_mode)m))) {
      *mode = m;
      return 1;
    }
  return 0;
}

static int parse_dtype(const field *f, int *dtype) {
  for (int d = 0; d <= 1; ++d)
    if (field_is(f, w4a16_dtype_name((w4a16_dtype)d))) {
      *dtype = d;
      return 1;
    }
  return 0;
}

/* parses one entry line's fields (after "entry"); 1 = entry filled, 0 = skipped (warned) */
static int parse_entry(const w4a16_config_cache *c, const char *path, int lineno, const field *f, int nf,
                       cache_entry *e) {
  memset(e, 0, sizeof *e);
  int64_t v;
  if (nf != 8) {
    w4a16_log(W4A16_LOG_WARNING, "config cache %s line %d: %d fields, expected 8; entry skipped", path, lineno, nf);
    return 0;
  }
  int ok = 1;
  ok = ok && parse_i64(f[1].s, f[1].len, 1, MAX_BUCKET, &v) && (v & (v - 1)) == 0 && (e->key.m_bucket = v, 1);
  ok = ok && parse_i64(f[2].s, f[2].len, 1, INT32_MAX, &v) && (e->key.n = v, 1);
  ok = ok && parse_i64(f[3].s, f[3].len, 1, INT32_MAX, &v) && (e->key.k = v, 1);
  ok = ok && parse_i64(f[4].s, f[4].len, 1, INT32_MAX, &v) && (e->key.group = v, 1);
  ok = ok && parse_mode(&f[5], &e->key.mode) && parse_dtype(&f[6], &e->key.dtype);
  if (ok) { /* a key no problem can have (N, K, group size) */
    w4a16_problem q;
    problem_of(&e->key, &q);
    ok = w4a16_check_problem(&q) == W4A16_STATUS_OK;
    w4a16_clear_error();
  }
  if (!ok) {
    w4a16_log(W4A16_LOG_WARNING, "config cache %s line %d: malformed key; entry skipped", path, lineno);
    return 0;
  }
  /* kernel names, comma-separated */
  const char *s = f[7].s, *end = f[7].s + f[7].len;
  while (s <= end) {
    const char *comma = memchr(s, ',', (size_t)(end - s));
    if (!comma) comma = end;
    size_t len = (size_t)(comma - s);
    char name[256];
    if (len == 0 || len >= sizeof name) {
      w4a16_log(W4A16_LOG_WARNING, "config cache %s line %d: empty or overlong kernel name; entry skipped", path,
                lineno);
      return 0;
    }
    memcpy(name, s, len);
    name[len] = '\0';
    const w4a16_kernel_desc *kd = find_kernel(c, name);
    if (!kd) {
      sanitize(name);
      w4a16_log(W4A16_LOG_WARNING, "config cache %s line %d: unknown kernel '%s'; entry skipped", path, lineno, name);
      return 0;
    }
    if ((int)kd->dtype != e->key.dtype || (int)kd->mode != e->key.mode) {
      w4a16_log(W4A16_LOG_WARNING, "config cache %s line %d: kernel %s does not match the entry's %s %s; entry skipped",
                path, lineno, kd->name, w4a16_dtype_name((w4a16_dtype)e->key.dtype),
                w4a16_quant_mode_name((w4a16_quant_mode)e->key.mode));
      return 0;
    }
    if (e->count == MAX_NAMES) {
      w4a16_log(W4A16_LOG_WARNING, "config cache %s line %d: more than %d kernels; entry skipped", path, lineno,
                MAX_NAMES);
      return 0;
    }
    e->kernels[e->count++] = kd;
    s = comma + 1;
  }
  return 1;
}

static void quote_field(const field *f, char *buf, size_t size) {
  size_t n = f->len < size - 1 ? f->len : size - 1;
  memcpy(buf, f->s, n);
  buf[n] = '\0';
  sanitize(buf);
}

/* Parses buf[0..len) against c's environment into out (entries appended). why
   receives the reason for a non-OK result. */
static parse_result parse_buffer(const w4a16_config_cache *c, const char *buf, size_t len, entry_list *out,
                                 char *why, size_t whysz) {
  field f[10];
  char a[128];
  why[0] = '\0';
  if (len == 0) {
    snprintf(why, whysz, "empty file");
    return PARSE_TRUNCATED;
  }
  if (memchr(buf, '\0', len)) {
    snprintf(why, whysz, "a NUL byte");
    return PARSE_CORRUPT;
  }
  /* first line: magic and format version */
  const char *nl = memchr(buf, '\n', len);
  size_t l0 = nl ? (size_t)(nl - buf) : len;
  int nf = split_tabs(buf, l0, f, 2);
  int64_t v;
  if (nf != 2 || !field_is(&f[0], MAGIC)) {
    snprintf(why, whysz, "not a w4a16 config cache (first line)");
    return PARSE_CORRUPT;
  }
  if (!parse_i64(f[1].s, f[1].len, 0, INT32_MAX, &v)) {
    snprintf(why, whysz, "malformed format version");
    return PARSE_CORRUPT;
  }
  if (v != W4A16_CACHE_FORMAT_VERSION) {
    snprintf(why, whysz, "format version %" PRId64 ", this library reads %d", v, W4A16_CACHE_FORMAT_VERSION);
    return PARSE_STALE;
  }
  /* the end line must be the last line, complete */
  if (buf[len - 1] != '\n') {
    snprintf(why, whysz, "the last line is incomplete");
    return PARSE_TRUNCATED;
  }
  size_t last = len - 1; /* index of the final '\n' */
  size_t ls = last;
  while (ls > 0 && buf[ls - 1] != '\n') --ls;
  nf = split_tabs(buf + ls, last - ls, f, 3);
  if (nf < 1 || !field_is(&f[0], "end")) {
    /* an end line elsewhere means trailing garbage, none at all a cut file */
    for (const char *p = buf; p < buf + ls;) {
      const char *q = memchr(p, '\n', (size_t)(buf + ls - p));
      if (!q) break;
      if (q - p >= 3 && memcmp(p, "end", 3) == 0 && (q - p == 3 || p[3] == '\t')) {
        snprintf(why, whysz, "data after the end line");
        return PARSE_CORRUPT;
      }
      p = q + 1;
    }
    snprintf(why, whysz, "no end line");
    return PARSE_TRUNCATED;
  }
  int64_t declared;
  uint64_t sum;
  if (nf != 3 || !parse_i64(f[1].s, f[1].len, 0, INT32_MAX, &declared) || !parse_hex64(f[2].s, f[2].len, &sum)) {
    snprintf(why, whysz, "malformed end line");
    return PARSE_CORRUPT;
  }
  if (fnv1a(buf, ls) != sum) {
    snprintf(why, whysz, "checksum mismatch");
    return PARSE_CORRUPT;
  }

  /* header lines, in order */
  static const char *keys[] = {"library", "fingerprint", "device", "sm_count", "cc", "cuda_runtime"};
  const char *p = buf + l0 + 1, *body_end = buf + ls;
  int lineno = 1;
  for (size_t h = 0; h < sizeof keys / sizeof keys[0]; ++h) {
    if (p >= body_end) {
      snprintf(why, whysz, "header ends before '%s'", keys[h]);
      return PARSE_CORRUPT;
    }
    const char *q = memchr(p, '\n', (size_t)(body_end - p));
    ++lineno;
    nf = split_tabs(p, (size_t)(q - p), f, 2);
    if (nf != 2 || !field_is(&f[0], keys[h])) {
      snprintf(why, whysz, "line %d: expected '%s'", lineno, keys[h]);
      return PARSE_CORRUPT;
    }
    const field *val = &f[1];
    char want[300];
    int ok = 1;
    switch (h) {
    case 0:
      snprintf(want, sizeof want, "%s", w4a16_version_string());
      ok = field_is(val, want);
      break;
    case 1: {
      uint64_t fp;
      if (!parse_hex64(val->s, val->len, &fp)) {
        snprintf(why, whysz, "line %d: malformed fingerprint", lineno);
        return PARSE_CORRUPT;
      }
      snprintf(want, sizeof want, "%016" PRIx64, c->env.registry_fingerprint);
      ok = fp == c->env.registry_fingerprint;
      break;
    }
    case 2:
      snprintf(want, sizeof want, "%s", c->env.device_name);
      ok = field_is(val, want);
      break;
    default: {
      int expect = h == 3 ? c->env.sm_count : h == 4 ? c->env.cc : c->env.cuda_runtime;
      if (!parse_i64(val->s, val->len, 0, INT32_MAX, &v)) {
        snprintf(why, whysz, "line %d: malformed %s", lineno, keys[h]);
        return PARSE_CORRUPT;
      }
      snprintf(want, sizeof want, "%d", expect);
      ok = v == expect;
    }
    }
    if (!ok) {
      quote_field(val, a, sizeof a);
      snprintf(why, whysz, "written for %s '%s', this is '%s'", keys[h], a, want);
      return PARSE_STALE;
    }
    p = q + 1;
  }

  /* entries */
  const char *path = c->path;
  int64_t seen = 0;
  size_t first = out->n;
  while (p < body_end) {
    const char *q = memchr(p, '\n', (size_t)(body_end - p));
    ++lineno;
    size_t ll = (size_t)(q - p);
    if (ll > 0 && p[0] == '#') {
      p = q + 1;
      continue;
    }
    nf = split_tabs(p, ll, f, 9);
    if (nf != 0 && field_is(&f[0], "entry")) { /* nf == -1: too many fields */
      ++seen;
      cache_entry e;
      if (parse_entry(c, path, lineno, f, nf < 0 ? 9 : nf, &e)) {
        e.line = (size_t)lineno;
        if (list_reserve(out) != 0) return PARSE_NOMEM;
        out->v[out->n++] = e; /* in key order below */
      }
    } else {
      snprintf(why, whysz, "line %d is not an entry", lineno);
      out->n = first;
      return PARSE_CORRUPT;
    }
    p = q + 1;
  }
  if (seen != declared) {
    snprintf(why, whysz, "%" PRId64 " entry lines, the end line says %" PRId64, seen, declared);
    out->n = first;
    return PARSE_CORRUPT;
  }
  list_sort_unique(out, first);
  return PARSE_OK;
}

/* Reads path; 1 = read (buf/len set, caller frees), 0 = does not exist, -1 = error (warned) */
static int read_file(const char *path, char **buf, size_t *len) {
  *buf = NULL;
  *len = 0;
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    if (errno == ENOENT) return 0;
    w4a16_log(W4A16_LOG_WARNING, "config cache %s: cannot open: %s; ignored", path, strerror(errno));
    return -1;
  }
  size_t cap = 4096, n = 0;
  char *b = malloc(cap);
  while (b) {
    if (n == cap) {
      if (cap >= MAX_FILE_BYTES) {
        w4a16_log(W4A16_LOG_WARNING, "config cache %s: larger than %u bytes; ignored", path, MAX_FILE_BYTES);
        free(b);
        fclose(fp);
        return -1;
      }
      char *nb = realloc(b, cap * 2);
      if (!nb) {
        free(b);
        b = NULL;
        break;
      }
      b = nb;
      cap *= 2;
    }
    size_t r = fread(b + n, 1, cap - n, fp);
    n += r;
    if (r == 0) break;
  }
  int err = ferror(fp);
  fclose(fp);
  if (!b || err) {
    free(b);
    w4a16_log(W4A16_LOG_WARNING, "config cache %s: read failed; ignored", path);
    return -1;
  }
  *buf = b;
  *len = n;
  return 1;
}

static const char *result_word(parse_result r) {
  switch (r) {
  case PARSE_STALE: return "stale";
  case PARSE_TRUNCATED: return "truncated";
  case PARSE_CORRUPT: return "corrupt";
  default: return "unreadable";
  }
}

/* Loads the file into out. Returns PARSE_OK also when the file does not exist
   (*exists = 0). Logs a warning for every other outcome (what = "ignored" etc.). */
static parse_result load_file(const w4a16_config_cache *c, entry_list *out, int *exists, const char *what) {
  char *buf;
  size_t len;
  *exists = 0;
  int r = read_file(c->path, &buf, &len);
  if (r == 0) return PARSE_OK;
  *exists = 1;
  if (r < 0) return PARSE_CORRUPT;
  char why[512];
  parse_result pr = parse_buffer(c, buf, len, out, why, sizeof why);
  free(buf);
  if (pr != PARSE_OK) {
    out->n = 0;
    if (pr == PARSE_NOMEM)
      w4a16_log(W4A16_LOG_WARNING, "config cache %s: out of memory while reading; %s", c->path, what);
    else
      w4a16_log(W4A16_LOG_WARNING, "config cache %s is %s (%s); %s", c->path, result_word(pr), why, what);
  }
  return pr;
}

static w4a16_status reload_locked(w4a16_config_cache *c) {
  entry_list l = {0};
  int exists;
  load_file(c, &l, &exists, "ignored");
  list_free(&c->entries);
  c->entries = l;
  atomic_fetch_add(&g_generation, 1u);
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_config_cache_reload(w4a16_config_cache *c) {
  if (!c) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "cache is NULL");
  pthread_mutex_lock(&c->mu);
  w4a16_status st = reload_locked(c);
  pthread_mutex_unlock(&c->mu);
  w4a16_clear_error();
  return st;
}

/* ------------------------------------------------------------------------- */
/* Lookup                                                                    */
/* ------------------------------------------------------------------------- */

w4a16_status w4a16_config_cache_lookup(w4a16_config_cache *c, const w4a16_problem *p,
                                       const w4a16_kernel_desc *kernels[], int capacity, int *returned) {
  if (returned) *returned = 0;
  if (!c) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "cache is NULL");
  if (!p) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem is NULL");
  if (!kernels || !returned) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "kernels or returned is NULL");
  if (capacity < 1) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "capacity = %d is less than 1", capacity);
  cache_key k = key_of(p);
  pthread_mutex_lock(&c->mu);
  cache_entry *e = list_find(&c->entries, &k);
  int n = 0;
  if (e)
    for (; n < e->count && n < capacity; ++n) kernels[n] = e->kernels[n];
  pthread_mutex_unlock(&c->mu);
  if (!n)
    return w4a16_fail(W4A16_STATUS_NO_KERNEL, "no config cache entry for M bucket %" PRId64 " N=%" PRId64
                      " K=%" PRId64, k.m_bucket, k.n, k.k);
  *returned = n;
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

/* ------------------------------------------------------------------------- */
/* Writing                                                                   */
/* ------------------------------------------------------------------------- */

typedef struct strbuf {
  char *s;
  size_t n, cap;
  int oom;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) W4A16_PRINTF(2, 3);
static void sb_printf(strbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->oom = 1;
      return;
    }
    if (b->s && b->n + (size_t)n < b->cap) {
      b->n += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap <= b->n + (size_t)n) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
      b->oom = 1;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
}

static void serialize(const w4a16_config_cache *c, entry_list *l, strbuf *b) {
  qsort(l->v, l->n, sizeof *l->v, entry_cmp);
  sb_printf(b, MAGIC "\t%d\n", W4A16_CACHE_FORMAT_VERSION);
  sb_printf(b, "library\t%s\n", w4a16_version_string());
  sb_printf(b, "fingerprint\t%016" PRIx64 "\n", c->env.registry_fingerprint);
  sb_printf(b, "device\t%s\n", c->env.device_name);
  sb_printf(b, "sm_count\t%d\n", c->env.sm_count);
  sb_printf(b, "cc\t%d\n", c->env.cc);
  sb_printf(b, "cuda_runtime\t%d\n", c->env.cuda_runtime);
  sb_printf(b, "# entry\tm_bucket\tn\tk\tgroup\tmode\tdtype\tkernels (best first)\n");
  for (size_t i = 0; i < l->n; ++i) {
    const cache_entry *e = &l->v[i];
    sb_printf(b, "entry\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%s\t%s\t", e->key.m_bucket, e->key.n,
              e->key.k, e->key.group, w4a16_quant_mode_name((w4a16_quant_mode)e->key.mode),
              w4a16_dtype_name((w4a16_dtype)e->key.dtype));
    for (int j = 0; j < e->count; ++j) sb_printf(b, "%s%s", j ? "," : "", e->kernels[j]->name);
    sb_printf(b, "\n");
  }
  if (!b->oom) {
    uint64_t sum = fnv1a(b->s, b->n);
    sb_printf(b, "end\t%zu\t%016" PRIx64 "\n", l->n, sum);
  }
}

static int mkdir_parents(const char *path) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return -1;
  for (char *s = tmp + 1; *s; ++s) {
    if (*s != '/') continue;
    *s = '\0';
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
    *s = '/';
  }
  return 0;
}

static int write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Under c->mu. Lock the file, merge it with memory (key `fresh` from memory wins,
   other keys from the file win), write atomically. Memory becomes the merge. */
static w4a16_status persist_locked(w4a16_config_cache *c, const cache_key *fresh) {
  char lockpath[PATH_MAX], tmppath[PATH_MAX];
  if (snprintf(lockpath, sizeof lockpath, "%s.lock", c->path) >= (int)sizeof lockpath ||
      snprintf(tmppath, sizeof tmppath, "%s.tmp.XXXXXX", c->path) >= (int)sizeof tmppath)
    return w4a16_fail(W4A16_STATUS_IO_ERROR, "config cache path %s is too long", c->path);
  if (mkdir_parents(c->path) != 0)
    return w4a16_fail(W4A16_STATUS_IO_ERROR, "cannot create the folder of %s: %s", c->path, strerror(errno));
  int lfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lfd < 0) return w4a16_fail(W4A16_STATUS_IO_ERROR, "cannot open %s: %s", lockpath, strerror(errno));
  while (flock(lfd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      int e = errno;
      close(lfd);
      return w4a16_fail(W4A16_STATUS_IO_ERROR, "cannot lock %s: %s", lockpath, strerror(e));
    }
  }
  entry_list merged = {0};
  int exists;
  parse_result pr = load_file(c, &merged, &exists, "replacing it");
  w4a16_status st = W4A16_STATUS_OK;
  if (pr == PARSE_NOMEM) st = w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "config cache merge");
  for (size_t i = 0; st == W4A16_STATUS_OK && i < c->entries.n; ++i) {
    const cache_entry *e = &c->entries.v[i];
    if ((key_cmp(&e->key, fresh) == 0 || !list_find(&merged, &e->key)) && list_put(&merged, e) != 0)
      st = w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "config cache merge");
  }
  strbuf b = {0};
  if (st == W4A16_STATUS_OK) {
    serialize(c, &merged, &b);
    if (b.oom) st = w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "config cache text");
  }
  if (st == W4A16_STATUS_OK) {
    int fd = mkstemp(tmppath);
    if (fd < 0) {
      st = w4a16_fail(W4A16_STATUS_IO_ERROR, "cannot create a temporary file beside %s: %s", c->path, strerror(errno));
    } else {
      int bad = fchmod(fd, 0644) != 0 || write_all(fd, b.s, b.n) != 0 || fsync(fd) != 0;
      int e = errno;
      if (close(fd) != 0 && !bad) {
        bad = 1;
        e = errno;
      }
      if (!bad && rename(tmppath, c->path) != 0) {
        bad = 1;
        e = errno;
      }
      if (bad) {
        unlink(tmppath);
        st = w4a16_fail(W4A16_STATUS_IO_ERROR, "cannot write %s: %s", c->path, strerror(e));
      }
    }
  }
  free(b.s);
  close(lfd); /* releases the lock */
  if (st == W4A16_STATUS_OK) {
    list_free(&c->entries);
    c->entries = merged;
  } else {
    list_free(&merged);
  }
  return st;
}

w4a16_status w4a16_config_cache_store(w4a16_config_cache *c, const w4a16_problem *p,
                                      const w4a16_kernel_desc *const kernels[], int count) {
  if (!c) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "cache is NULL");
  if (!p) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem is NULL");
  if (!kernels) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "kernels is NULL");
  if (count < 1) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "count = %d is less than 1", count);
  w4a16_status st = w4a16_check_problem(p);
  if (st != W4A16_STATUS_OK) return st;
  cache_entry e;
  memset(&e, 0, sizeof e);
  e.key = key_of(p);
  for (int i = 0; i < count && e.count < MAX_NAMES; ++i) {
    const w4a16_kernel_desc *kd = kernels[i];
    if (!kd || !kd->name) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "kernels[%d] is NULL", i);
    if (find_kernel(c, kd->name) != kd)
      return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "kernels[%d] (%s) is not in the cache's kernel table", i,
                        kd->name);
    if ((int)kd->dtype != e.key.dtype || (int)kd->mode != e.key.mode)
      return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "kernels[%d] (%s) is for %s %s, the problem is %s %s", i,
                        kd->name, w4a16_dtype_name(kd->dtype), w4a16_quant_mode_name(kd->mode),
                        w4a16_dtype_name(p->dtype), w4a16_quant_mode_name(p->mode));
    e.kernels[e.count++] = kd;
  }
  pthread_mutex_lock(&c->mu);
  if (list_put(&c->entries, &e) != 0) {
    pthread_mutex_unlock(&c->mu);
    return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "config cache entry");
  }
  st = persist_locked(c, &e.key);
  pthread_mutex_unlock(&c->mu);
  atomic_fetch_add(&g_generation, 1u);
  if (st == W4A16_STATUS_OK) w4a16_clear_error();
  return st;
}

/* ------------------------------------------------------------------------- */
/* The process-wide cache of each device                                     */
/* ------------------------------------------------------------------------- */

#define MAX_DEVICES 64
static pthread_mutex_t g_default_mu = PTHREAD_MUTEX_INITIALIZER;
static w4a16_config_cache *g_default[MAX_DEVICES];
static char g_default_failed[MAX_DEVICES];

w4a16_config_cache *w4a16_config_cache_default(void) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return NULL;
  }
  if (dev < 0 || dev >= MAX_DEVICES) return NULL;
  pthread_mutex_lock(&g_default_mu);
  w4a16_config_cache *c = g_default[dev];
  if (!c && !g_default_failed[dev]) {
    w4a16_status st = w4a16_config_cache_open(NULL, NULL, NULL, 0, &c);
    if (st != W4A16_STATUS_OK) {
      g_default_failed[dev] = 1;
      w4a16_log(W4A16_LOG_WARNING, "no config cache for device %d: %s", dev, w4a16_last_error_message());
      c = NULL;
    }
    g_default[dev] = c;
  }
  pthread_mutex_unlock(&g_default_mu);
  return c;
}

w4a16_status w4a16_config_cache_entry(w4a16_config_cache *c, size_t index, w4a16_problem *key,
                                      const w4a16_kernel_desc *kernels[], int capacity, int *returned) {
  if (returned) *returned = 0;
  if (!c || !key || !kernels || !returned)
    return w4a16_fail(W4A16_STATUS_NULL_POINTER, "cache, key, kernels or returned is NULL");
  if (capacity < 1) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "capacity = %d is less than 1", capacity);
  pthread_mutex_lock(&c->mu);
  if (index >= c->entries.n) {
    size_t n = c->entries.n;
    pthread_mutex_unlock(&c->mu);
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "index %zu is out of range (%zu entries)", index, n);
  }
  const cache_entry *e = &c->entries.v[index];
  problem_of(&e->key, key);
  int n = 0;
  for (; n < e->count && n < capacity; ++n) kernels[n] = e->kernels[n];
  pthread_mutex_unlock(&c->mu);
  *returned = n;
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

/* test_cache.c - the config cache on a fake registry and a fake device: round
   trip, M buckets, stale / truncated / corrupt files, unknown kernels, a
   randomized parser test, several threads and several processes writing at
   once, paths, the log callback. No GPU needed. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "select_internal.h"
#include "test_util.h"

#define K_(nm, dt, md, tn, tm)                                                                            \
  {.name = nm, .family = W4A16_FAMILY_SM80, .sm_min = 80, .sm_max = 999, .arch = "sm80", .dtype = dt,    \
   .mode = md, .tile_n = tn, .tile_m = tm, .tile_k = 64, .cluster_n = 1, .cluster_m = 1, .cluster_k = 1, \
   .schedule = W4A16_SCHEDULE_MULTISTAGE, .stages = 3, .split_k = 1, .threads = 128, .min_group = 32,    \
   .impl = NULL}

#define BF W4A16_DTYPE_BF16
#define FH W4A16_DTYPE_F16
#define FGS W4A16_FINEGRAINED_SCALE_ONLY
#define FGSZ W4A16_FINEGRAINED_SCALE_AND_ZEROS
#define PC W4A16_PER_COLUMN_SCALE_ONLY

static const w4a16_kernel_desc fake[] = {
    K_("w4a16_sm80_bf16_u4_fgs_128x128x64_s3", BF, FGS, 128, 128),
    K_("w4a16_sm80_bf16_u4_fgs_128x16x64_s3", BF, FGS, 128, 16),
    K_("w4a16_sm80_bf16_u4_fgs_64x32x64_s3", BF, FGS, 64, 32),
    K_("w4a16_sm80_bf16_u4_fgsz_128x16x64_s3", BF, FGSZ, 128, 16),
    K_("w4a16_sm80_bf16_u4_pc_128x16x64_s3", BF, PC, 128, 16),
    K_("w4a16_sm80_f16_u4_fgs_128x16x64_s3", FH, FGS, 128, 16),
};
#define NFAKE (sizeof fake / sizeof fake[0])

static w4a16_cache_env fake_env(void) {
  w4a16_cache_env e;
  memset(&e, 0, sizeof e);
  snprintf(e.device_name, sizeof e.device_name, "NVIDIA Fake GPU 80GB");
  e.sm_count = 132;
  e.cc = 90;
  e.cuda_runtime = 13000;
  e.registry_fingerprint = 0x0123456789abcdefull;
  return e;
}

/* ---- log capture ---- */
static char g_log[16384];
static int g_warnings;
static void capture(w4a16_log_level level, const char *msg, void *user) {
  (void)user;
  if (level >= W4A16_LOG_WARNING) ++g_warnings;
  size_t n = strlen(g_log);
  snprintf(g_log + n, sizeof g_log - n, "%s\n", msg);
}
static void log_reset(void) {
  g_log[0] = '\0';
  g_warnings = 0;
}

/* ---- a scratch folder per test ---- */
typedef struct scratch {
  char dir[256];
  char path[300];
} scratch;

static int setup(void **state) {
  scratch *s = calloc(1, sizeof *s);
  const char *tmp = getenv("TMPDIR");
  snprintf(s->dir, sizeof s->dir, "%s/w4a16_test_cache_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(s->dir)) return -1;
  snprintf(s->path, sizeof s->path, "%s/configs.tsv", s->dir);
  w4a16_set_log_callback(capture, NULL);
  log_reset();
  *state = s;
  return 0;
}

static int teardown(void **state) {
  scratch *s = *state;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", s->dir);
  w4a16_set_log_callback(NULL, NULL);
  free(s);
  return 0;
}

static w4a16_config_cache *open_cache(const char *path, const w4a16_cache_env *env) {
  w4a16_config_cache *c = NULL;
  assert_int_equal(w4a16_config_cache_open(path, env, fake, NFAKE, &c), W4A16_STATUS_OK);
  assert_non_null(c);
  return c;
}

static w4a16_problem prob(int64_t m, int64_t n, int64_t k) { return test_problem(m, n, k, 128, FGS, BF); }

static void store1(w4a16_config_cache *c, const w4a16_problem *p, const w4a16_kernel_desc *a,
                   const w4a16_kernel_desc *b) {
  const w4a16_kernel_desc *ks[2] = {a, b};
  assert_int_equal(w4a16_config_cache_store(c, p, ks, b ? 2 : 1), W4A16_STATUS_OK);
}

/* the kernels of the entry for p, or 0 */
static int lookup(w4a16_config_cache *c, const w4a16_problem *p, const w4a16_kernel_desc **ks) {
  int n = -1;
  w4a16_status st = w4a16_config_cache_lookup(c, p, ks, 16, &n);
  if (st == W4A16_STATUS_NO_KERNEL) {
    assert_int_equal(n, 0);
    return 0;
  }
  assert_int_equal(st, W4A16_STATUS_OK);
  return n;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char *b = malloc(1 << 20);
  *len = fread(b, 1, (1 << 20) - 1, f);
  b[*len] = '\0';
  fclose(f);
  return b;
}

static void spit(const char *path, const char *b, size_t len) {
  unlink(path); /* a fresh file: truncating one in place makes ext4 flush it (slow) */
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

static uint64_t fnv1a(const char *p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= (unsigned char)p[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* body (every line before the end line) + a correct end line */
static size_t seal(const char *body, size_t blen, int entries, char *out, size_t cap) {
  assert_true(blen + 64 < cap);
  memcpy(out, body, blen);
  int n = snprintf(out + blen, cap - blen, "end\t%d\t%016llx\n", entries, (unsigned long long)fnv1a(body, blen));
  return blen + (size_t)n;
}

static size_t header(const w4a16_cache_env *e, const char *library, int format, char *out, size_t cap) {
  return (size_t)snprintf(out, cap,
                          "w4a16-config-cache\t%d\nlibrary\t%s\nfingerprint\t%016llx\ndevice\t%s\nsm_count\t%d\ncc\t%d\n"
                          "cuda_runtime\t%d\n",
                          format, library, (unsigned long long)e->registry_fingerprint, e->device_name, e->sm_count,
                          e->cc, e->cuda_runtime);
}

/* every entry names kernels of the table matching its key; returns the entry count */
static size_t check_entries(w4a16_config_cache *c) {
  size_t n = w4a16_config_cache_size(c);
  for (size_t i = 0; i < n; ++i) {
    w4a16_problem key;
    const w4a16_kernel_desc *ks[16];
    int got = 0;
    assert_int_equal(w4a16_config_cache_entry(c, i, &key, ks, 16, &got), W4A16_STATUS_OK);
    assert_true(got >= 1 && got <= 16);
    assert_true(key.m >= 1 && key.m <= 8192 && (key.m & (key.m - 1)) == 0);
    for (int j = 0; j < got; ++j) {
      assert_true(ks[j] >= fake && ks[j] < fake + NFAKE);
      assert_int_equal(ks[j]->dtype, key.dtype);
      assert_int_equal(ks[j]->mode, key.mode);
    }
  }
  return n;
}

/* ------------------------------------------------------------------------- */

static void test_m_bucket(void **state) {
  (void)state;
  assert_int_equal(w4a16_cache_m_bucket(1), 1);
  assert_int_equal(w4a16_cache_m_bucket(2), 2);
  assert_int_equal(w4a16_cache_m_bucket(3), 4);
  assert_int_equal(w4a16_cache_m_bucket(16), 16);
  assert_int_equal(w4a16_cache_m_bucket(17), 32);
  assert_int_equal(w4a16_cache_m_bucket(4095), 4096);
  assert_int_equal(w4a16_cache_m_bucket(8192), 8192);
  assert_int_equal(w4a16_cache_m_bucket(8193), 8192);
  assert_int_equal(w4a16_cache_m_bucket(1 << 30), 8192);
}

static void test_round_trip(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  w4a16_config_cache *c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 0);
  assert_string_equal(w4a16_config_cache_path(c), s->path);
  w4a16_problem p1 = prob(5, 4096, 4096), p2 = prob(1000, 4096, 14336), p3 = prob(1, 6144, 4096);
  store1(c, &p1, &fake[1], &fake[0]);
  store1(c, &p2, &fake[0], NULL);
  store1(c, &p3, &fake[2], &fake[1]);
  w4a16_problem pz = test_problem(64, 4096, 4096, 64, FGSZ, BF), pc = test_problem(64, 4096, 4096, 0, PC, BF);
  store1(c, &pz, &fake[3], NULL);
  store1(c, &pc, &fake[4], NULL);
  assert_int_equal(w4a16_config_cache_size(c), 5);
  assert_int_equal(g_warnings, 0);
  w4a16_config_cache_close(c);

  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 5);
  assert_int_equal(g_warnings, 0);
  const w4a16_kernel_desc *ks[16];
  /* M = 5 lives in bucket 8: 5..8 hit, 4 and 9 miss */
  for (int64_t m = 5; m <= 8; ++m) {
    w4a16_problem q = prob(m, 4096, 4096);
    assert_int_equal(lookup(c, &q, ks), 2);
    assert_ptr_equal(ks[0], &fake[1]);
    assert_ptr_equal(ks[1], &fake[0]);
  }
  w4a16_problem q = prob(4, 4096, 4096);
  assert_int_equal(lookup(c, &q, ks), 0);
  q = prob(9, 4096, 4096);
  assert_int_equal(lookup(c, &q, ks), 0);
  q = prob(1024, 4096, 14336);
  assert_int_equal(lookup(c, &q, ks), 1);
  assert_ptr_equal(ks[0], &fake[0]);
  /* every field of the key counts */
  q = test_problem(5, 4096, 4096, 64, FGS, BF);
  assert_int_equal(lookup(c, &q, ks), 0);
  q = test_problem(5, 4096, 4096, 128, FGS, FH);
  assert_int_equal(lookup(c, &q, ks), 0);
  q = test_problem(5, 4096, 4096, 128, FGSZ, BF);
  assert_int_equal(lookup(c, &q, ks), 0);
  q = test_problem(33, 4096, 4096, 64, FGSZ, BF);
  assert_int_equal(lookup(c, &q, ks), 1);
  assert_ptr_equal(ks[0], &fake[3]);
  /* per-column: group 0 and group K are the same key */
  q = test_problem(64, 4096, 4096, 4096, PC, BF);
  assert_int_equal(lookup(c, &q, ks), 1);
  assert_ptr_equal(ks[0], &fake[4]);
  /* capacity limits the copy */
  q = prob(6, 4096, 4096);
  int n = 0;
  assert_int_equal(w4a16_config_cache_lookup(c, &q, ks, 1, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 1);
  check_entries(c);

  /* storing a key again replaces its ranking */
  store1(c, &p1, &fake[2], NULL);
  w4a16_config_cache_close(c);
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 5);
  assert_int_equal(lookup(c, &p1, ks), 1);
  assert_ptr_equal(ks[0], &fake[2]);
  w4a16_config_cache_close(c);

  /* the text: header fields and names, never indices */
  size_t len;
  char *text = slurp(s->path, &len);
  assert_true(strncmp(text, "w4a16-config-cache\t1\n", 21) == 0);
  char want[128];
  snprintf(want, sizeof want, "library\t%s\n", w4a16_version_string());
  assert_non_null(strstr(text, want));
  assert_non_null(strstr(text, "fingerprint\t0123456789abcdef\n"));
  assert_non_null(strstr(text, "device\tNVIDIA Fake GPU 80GB\n"));
  assert_non_null(strstr(text, "sm_count\t132\n"));
  assert_non_null(strstr(text, "cc\t90\n"));
  assert_non_null(strstr(text, "cuda_runtime\t13000\n"));
  assert_non_null(strstr(text, "entry\t8\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_64x32x64_s3\n"));
  assert_non_null(strstr(text, "\nend\t5\t"));
  free(text);
}

static void test_stale(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  w4a16_config_cache *c = open_cache(s->path, &env);
  w4a16_problem p = prob(16, 4096, 4096);
  store1(c, &p, &fake[1], NULL);
  w4a16_config_cache_close(c);

  const char *field[] = {"fingerprint", "device", "sm_count", "cc", "cuda_runtime"};
  for (int f = 0; f < 5; ++f) {
    w4a16_cache_env other = env;
    switch (f) {
    case 0: other.registry_fingerprint ^= 1; break;
    case 1: snprintf(other.device_name, sizeof other.device_name, "NVIDIA Other GPU"); break;
    case 2: other.sm_count = 114; break;
    case 3: other.cc = 80; break;
    case 4: other.cuda_runtime = 12080; break;
    }
    log_reset();
    c = open_cache(s->path, &other);
    assert_int_equal(w4a16_config_cache_size(c), 0);
    assert_int_equal(g_warnings, 1);
    assert_non_null(strstr(g_log, "stale"));
    assert_non_null(strstr(g_log, field[f]));
    w4a16_config_cache_close(c);
  }
  /* another library version, another format version (checksums correct) */
  char body[4096], file[4096];
  size_t bl = header(&env, "9.9.9", 1, body, sizeof body);
  bl += (size_t)snprintf(body + bl, sizeof body - bl,
                         "entry\t16\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n");
  spit(s->path, file, seal(body, bl, 1, file, sizeof file));
  log_reset();
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 0);
  assert_non_null(strstr(g_log, "stale"));
  assert_non_null(strstr(g_log, "library"));
  w4a16_config_cache_close(c);
  bl = header(&env, w4a16_version_string(), 2, body, sizeof body);
  spit(s->path, file, seal(body, bl, 0, file, sizeof file));
  log_reset();
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 0);
  assert_non_null(strstr(g_log, "stale"));
  assert_non_null(strstr(g_log, "format version 2"));
  /* a store replaces a stale file (with a warning) and the result is valid */
  log_reset();
  store1(c, &p, &fake[0], NULL);
  assert_non_null(strstr(g_log, "replacing"));
  w4a16_config_cache_close(c);
  log_reset();
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 1);
  assert_int_equal(g_warnings, 0);
  w4a16_config_cache_close(c);
}

static void test_truncated(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  w4a16_config_cache *c = open_cache(s->path, &env);
  for (int i = 0; i < 6; ++i) {
    w4a16_problem p = prob(1 << i, 4096, 4096);
    store1(c, &p, &fake[i % 3], NULL);
  }
  w4a16_config_cache_close(c);
  size_t len;
  char *text = slurp(s->path, &len);
  /* every proper prefix is rejected as a whole, with one warning */
  for (size_t cut = 0; cut < len; ++cut) {
    spit(s->path, text, cut);
    log_reset();
    c = open_cache(s->path, &env);
    assert_int_equal(w4a16_config_cache_size(c), 0);
    assert_int_equal(g_warnings, 1);
    w4a16_config_cache_close(c);
  }
  /* cut at the end line: "truncated" by name */
  char *end = strstr(text, "\nend\t");
  assert_non_null(end);
  spit(s->path, text, (size_t)(end - text) + 1);
  log_reset();
  c = open_cache(s->path, &env);
  assert_non_null(strstr(g_log, "truncated"));
  w4a16_config_cache_close(c);
  /* the whole file still reads */
  spit(s->path, text, len);
  log_reset();
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 6);
  assert_int_equal(g_warnings, 0);
  w4a16_config_cache_close(c);
  free(text);
}

static void test_corrupt(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  w4a16_config_cache *c = open_cache(s->path, &env);
  w4a16_problem p = prob(16, 4096, 4096);
  store1(c, &p, &fake[1], &fake[0]);
  w4a16_config_cache_close(c);
  size_t len;
  char *text = slurp(s->path, &len);
  /* one changed byte in an entry: checksum */
  char *e = strstr(text, "entry\t16\t4096");
  assert_non_null(e);
  e[9] = '8'; /* n 4096 -> 8096 */
  spit(s->path, text, len);
  log_reset();
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 0);
  assert_non_null(strstr(g_log, "corrupt"));
  assert_non_null(strstr(g_log, "checksum"));
  w4a16_config_cache_close(c);
  /* not a cache at all */
  spit(s->path, "hello\nworld\n", 12);
  log_reset();
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 0);
  assert_non_null(strstr(g_log, "corrupt"));
  w4a16_config_cache_close(c);
  /* binary garbage with NUL bytes */
  char junk[256];
  for (int i = 0; i < 256; ++i) junk[i] = (char)(i * 37);
  spit(s->path, junk, sizeof junk);
  log_reset();
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 0);
  assert_int_equal(g_warnings, 1);
  w4a16_config_cache_close(c);
  /* data after the end line */
  char body[4096], file[8192];
  size_t bl = header(&env, w4a16_version_string(), 1, body, sizeof body);
  size_t fl = seal(body, bl, 0, file, sizeof file);
  fl += (size_t)snprintf(file + fl, sizeof file - fl, "entry\t1\t16\t64\t32\tFINEGRAINED_SCALE_ONLY\tbf16\tx\n");
  spit(s->path, file, fl);
  log_reset();
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 0);
  assert_non_null(strstr(g_log, "corrupt"));
  w4a16_config_cache_close(c);
  /* an entry count that disagrees with the end line */
  bl += (size_t)snprintf(body + bl, sizeof body - bl,
                         "entry\t16\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n");
  spit(s->path, file, seal(body, bl, 2, file, sizeof file));
  log_reset();
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 0);
  assert_non_null(strstr(g_log, "corrupt"));
  w4a16_config_cache_close(c);
  free(text);
}

/* sealed files (correct checksum) with bad entries: each bad entry is skipped, the rest kept */
static void test_unknown_kernel(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  char body[8192], file[8192];
  size_t bl = header(&env, w4a16_version_string(), 1, body, sizeof body);
  const char *entries[] = {
      "entry\t16\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n", /* good */
      "entry\t32\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_999x1x64_s3\n",  /* unknown */
      "entry\t64\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3,"
      "w4a16_nonexistent\n",                                                                            /* half unknown */
      "entry\t128\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_f16_u4_fgs_128x16x64_s3\n", /* dtype */
      "entry\t256\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgsz_128x16x64_s3\n", /* mode */
      "entry\t3\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n",   /* bucket */
      "entry\t512\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\t\n",                                    /* empty */
      "entry\t512\t-4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n", /* n < 0 */
      "entry\t512\t4096\t4096\t128\tFINEGRAINED\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n",             /* mode name */
      "entry\t512\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\textra\n",
      "entry\t1024\t4096\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x128x64_s3\n", /* good */
      "entry\t512\t4100\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n",   /* N % 16 */
      "entry\t512\t4096\t4000\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n",   /* K % 64 */
      "entry\t512\t4096\t4096\t48\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n",    /* group */
      "entry\t512\t99999999999999999999\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n",
      "entry\t512\t9999999999999999999\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\tw4a16_sm80_bf16_u4_fgs_128x16x64_s3\n",
  };
  int ne = (int)(sizeof entries / sizeof entries[0]);
  for (int i = 0; i < ne; ++i) bl += (size_t)snprintf(body + bl, sizeof body - bl, "%s", entries[i]);
  spit(s->path, file, seal(body, bl, ne, file, sizeof file));
  log_reset();
  w4a16_config_cache *c = open_cache(s->path, &env);
  assert_int_equal(check_entries(c), 2);
  assert_int_equal(g_warnings, ne - 2);
  assert_non_null(strstr(g_log, "unknown kernel 'w4a16_sm80_bf16_u4_fgs_999x1x64_s3'"));
  assert_non_null(strstr(g_log, "unknown kernel 'w4a16_nonexistent'"));
  const w4a16_kernel_desc *ks[16];
  w4a16_problem q = prob(64, 4096, 4096);
  assert_int_equal(lookup(c, &q, ks), 0); /* the half-unknown entry is not trusted at all */
  q = prob(1024, 4096, 4096);
  assert_int_equal(lookup(c, &q, ks), 1);
  assert_ptr_equal(ks[0], &fake[0]);
  w4a16_config_cache_close(c);
}

/* A file of many entries (every key twice, the later one with other kernels): all load, the later
   of each key wins, lookups find them (entries are kept sorted: a load of n entries is
   O(n log n), where a scan per entry made 40000 take seconds) */
static void test_many_entries(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  enum { KEYS = 20000 };
  const size_t cap = (size_t)KEYS * 2 * 128 + 4096;
  char *body = malloc(cap), *file = malloc(cap + 128);
  assert_non_null(body);
  assert_non_null(file);
  size_t bl = header(&env, w4a16_version_string(), 1, body, cap);
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < KEYS; ++i) /* keys in a scrambled order */
      bl += (size_t)snprintf(body + bl, cap - bl, "entry\t%d\t%d\t4096\t128\tFINEGRAINED_SCALE_ONLY\tbf16\t%s\n",
                             1 << ((i * 7919) % 13), 16 * (1 + (i * 104729) % (KEYS / 13 + 1)),
                             pass ? "w4a16_sm80_bf16_u4_fgs_128x128x64_s3" : "w4a16_sm80_bf16_u4_fgs_128x16x64_s3");
  spit(s->path, file, seal(body, bl, 2 * KEYS, file, cap + 128));
  log_reset();
  w4a16_config_cache *c = open_cache(s->path, &env);
  assert_int_equal(g_warnings, 0);
  const size_t n = check_entries(c);
  assert_true(n > KEYS / 2 && n <= KEYS);
  w4a16_problem prev = {0};
  for (size_t i = 0; i < n; ++i) { /* key order, each key once, the second pass's kernel */
    w4a16_problem key;
    const w4a16_kernel_desc *ks[16];
    int got = 0;
    assert_int_equal(w4a16_config_cache_entry(c, i, &key, ks, 16, &got), W4A16_STATUS_OK);
    assert_int_equal(got, 1);
    assert_ptr_equal(ks[0], &fake[0]);
    if (i) assert_true(key.n > prev.n || (key.n == prev.n && key.m > prev.m));
    prev = key;
    w4a16_problem q = prob(key.m, key.n, 4096);
    assert_int_equal(lookup(c, &q, ks), 1);
    assert_ptr_equal(ks[0], &fake[0]);
  }
  w4a16_config_cache_close(c);
  free(body);
  free(file);
}

/* random bytes and random mutations of a valid file: never a crash, never an unknown kernel */
static void test_fuzz_parser(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  w4a16_config_cache *c = open_cache(s->path, &env);
  for (int i = 0; i < 12; ++i) {
    w4a16_problem p = i % 3 == 2 ? test_problem(1 << i, 4096, 4096, 64, FGSZ, BF) : prob(1 << i, 4096 + 16 * i, 4096);
    if (i % 3 == 2)
      store1(c, &p, &fake[3], NULL);
    else
      store1(c, &p, &fake[i % 3], &fake[(i + 1) % 3]);
  }
  w4a16_config_cache_close(c);
  size_t len;
  char *valid = slurp(s->path, &len);
  char *end = strstr(valid, "\nend\t");
  assert_non_null(end);
  size_t body_len = (size_t)(end - valid) + 1;
  static const char alphabet[] = "\t\n,#-0123456789abcdefentryw4a16_sm80bf16FINEGRAINED_SCALE_ONLY";
  char *buf = malloc(1 << 16), *file = malloc(1 << 17);
  test_rng rng = test_rng_fresh("test_cache fuzz");
  size_t accepted = 0, with_entries = 0;
  for (int it = 0; it < 4000; ++it) {
    size_t n;
    int kind = (int)(test_rng_next(&rng) % 4);
    if (kind == 0) { /* random bytes */
      n = test_rng_next(&rng) % 2048;
      for (size_t i = 0; i < n; ++i) buf[i] = (char)(test_rng_next(&rng) & 0xff);
    } else {
      /* mutate the body (kind 1, 2: and reseal so the deeper checks run) or the whole file (kind 3) */
      const char *src = kind == 3 ? valid : valid;
      n = kind == 3 ? len : body_len;
      memcpy(buf, src, n);
      int muts = 1 + (int)(test_rng_next(&rng) % 6);
      for (int m = 0; m < muts; ++m) {
        size_t at = n ? test_rng_next(&rng) % n : 0;
        switch (test_rng_next(&rng) % 5) {
        case 0: /* replace a byte */
          if (n) buf[at] = test_rng_next(&rng) % 2 ? alphabet[test_rng_next(&rng) % (sizeof alphabet - 1)]
                                                    : (char)(test_rng_next(&rng) & 0xff);
          break;
        case 1: /* delete a run */
          if (n) {
            size_t k = 1 + test_rng_next(&rng) % 16;
            if (at + k > n) k = n - at;
            memmove(buf + at, buf + at + k, n - at - k);
            n -= k;
          }
          break;
        case 2: /* insert a byte */
          if (n + 1 < (1 << 16)) {
            memmove(buf + at + 1, buf + at, n - at);
            buf[at] = alphabet[test_rng_next(&rng) % (sizeof alphabet - 1)];
            ++n;
          }
          break;
        case 3: /* duplicate a run */
          if (n && n + 64 < (1 << 16)) {
            size_t k = 1 + test_rng_next(&rng) % 64;
            if (at + k > n) k = n - at;
            memmove(buf + at + k, buf + at, n - at);
            n += k;
          }
          break;
        case 4: /* truncate */
          n = at;
          break;
        }
      }
    }
    size_t fl = n;
    if (kind == 1 || kind == 2) {
      int lines = 0;
      for (size_t i = 0; i < n; ++i) lines += buf[i] == '\n' && i + 6 < n && memcmp(buf + i + 1, "entry\t", 6) == 0;
      fl = seal(buf, n, kind == 1 ? lines : (int)(test_rng_next(&rng) % 16), file, 1 << 17);
    } else {
      memcpy(file, buf, n);
    }
    spit(s->path, file, fl);
    log_reset();
    c = open_cache(s->path, &env);
    size_t got = check_entries(c);
    accepted += g_warnings == 0;
    with_entries += got > 0;
    /* the parsed entries are usable as they are */
    const w4a16_kernel_desc *ks[16];
    w4a16_problem q = prob(4, 4096 + 32, 4096);
    int k = lookup(c, &q, ks);
    for (int i = 0; i < k; ++i) assert_true(ks[i] >= fake && ks[i] < fake + NFAKE);
    w4a16_config_cache_close(c);
  }
  fprintf(stderr, "[test_cache fuzz] 4000 files: %zu accepted without warning, %zu yielded entries\n", accepted,
          with_entries);
  assert_true(with_entries > 0); /* resealed mutations do reach the entry parser */
  free(buf);
  free(file);
  free(valid);
}

/* several processes storing at once: no entry lost */
static void test_processes(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  enum { PROCS = 4, EACH = 40 };
  pid_t pids[PROCS];
  for (int pr = 0; pr < PROCS; ++pr) {
    pids[pr] = fork();
    assert_true(pids[pr] >= 0);
    if (pids[pr] == 0) {
      w4a16_config_cache *c = NULL;
      if (w4a16_config_cache_open(s->path, &env, fake, NFAKE, &c) != W4A16_STATUS_OK) _exit(3);
      for (int i = 0; i < EACH; ++i) {
        w4a16_problem p = prob(1 << (i % 13), 16 * (1 + pr * 1000 + i), 4096);
        const w4a16_kernel_desc *ks[1] = {&fake[(pr + i) % 3]};
        if (w4a16_config_cache_store(c, &p, ks, 1) != W4A16_STATUS_OK) _exit(4);
      }
      w4a16_config_cache_close(c);
      _exit(0);
    }
  }
  for (int pr = 0; pr < PROCS; ++pr) {
    int st = 0;
    assert_int_equal(waitpid(pids[pr], &st, 0), pids[pr]);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
  }
  log_reset();
  w4a16_config_cache *c = open_cache(s->path, &env);
  assert_int_equal(g_warnings, 0);
  assert_int_equal(check_entries(c), PROCS * EACH);
  const w4a16_kernel_desc *ks[16];
  for (int pr = 0; pr < PROCS; ++pr)
    for (int i = 0; i < EACH; ++i) {
      w4a16_problem p = prob(1 << (i % 13), 16 * (1 + pr * 1000 + i), 4096);
      assert_int_equal(lookup(c, &p, ks), 1);
      assert_ptr_equal(ks[0], &fake[(pr + i) % 3]);
    }
  w4a16_config_cache_close(c);
  /* no temporary file left behind */
  char cmd[400];
  snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp", s->dir);
  assert_int_not_equal(system(cmd), 0);
}

/* two cache objects on one file: each store merges what the other wrote */
static void test_merge(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  w4a16_config_cache *a = open_cache(s->path, &env), *b = open_cache(s->path, &env);
  w4a16_problem p1 = prob(16, 4096, 4096), p2 = prob(32, 4096, 4096);
  store1(a, &p1, &fake[0], NULL);
  store1(b, &p2, &fake[1], NULL);
  assert_int_equal(w4a16_config_cache_size(b), 2); /* b merged a's entry */
  assert_int_equal(w4a16_config_cache_size(a), 1);
  assert_int_equal(w4a16_config_cache_reload(a), W4A16_STATUS_OK);
  assert_int_equal(w4a16_config_cache_size(a), 2);
  /* a's newer ranking of p2 wins over the file; b's p1 is kept */
  store1(a, &p2, &fake[2], NULL);
  w4a16_config_cache *c = open_cache(s->path, &env);
  const w4a16_kernel_desc *ks[16];
  assert_int_equal(lookup(c, &p2, ks), 1);
  assert_ptr_equal(ks[0], &fake[2]);
  assert_int_equal(lookup(c, &p1, ks), 1);
  assert_ptr_equal(ks[0], &fake[0]);
  w4a16_config_cache_close(a);
  w4a16_config_cache_close(b);
  w4a16_config_cache_close(c);
}

/* threads storing and looking up on one cache object */
typedef struct thread_arg {
  w4a16_config_cache *c;
  int id;
  int failures;
} thread_arg;

static void *thread_main(void *p) {
  thread_arg *a = p;
  for (int i = 0; i < 25; ++i) {
    w4a16_problem q = prob(1 << (i % 13), 16 * (1 + a->id * 100 + i), 8192);
    const w4a16_kernel_desc *ks[1] = {&fake[i % 3]}, *got[16];
    if (w4a16_config_cache_store(a->c, &q, ks, 1) != W4A16_STATUS_OK) ++a->failures;
    int n = 0;
    if (w4a16_config_cache_lookup(a->c, &q, got, 16, &n) != W4A16_STATUS_OK || n != 1 || got[0] != ks[0])
      ++a->failures;
  }
  return NULL;
}

static void test_threads(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  w4a16_config_cache *c = open_cache(s->path, &env);
  pthread_t t[4];
  thread_arg args[4];
  for (int i = 0; i < 4; ++i) {
    args[i] = (thread_arg){c, i, 0};
    assert_int_equal(pthread_create(&t[i], NULL, thread_main, &args[i]), 0);
  }
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(args[i].failures, 0);
  }
  assert_int_equal(w4a16_config_cache_size(c), 100);
  w4a16_config_cache_close(c);
  c = open_cache(s->path, &env);
  assert_int_equal(check_entries(c), 100);
  w4a16_config_cache_close(c);
}

static void test_store_arguments(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  w4a16_config_cache *c = open_cache(s->path, &env);
  w4a16_problem p = prob(16, 4096, 4096);
  const w4a16_kernel_desc *ks[2] = {&fake[0], NULL};
  assert_int_equal(w4a16_config_cache_store(NULL, &p, ks, 1), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_config_cache_store(c, NULL, ks, 1), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_config_cache_store(c, &p, NULL, 1), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_config_cache_store(c, &p, ks, 0), W4A16_STATUS_INVALID_VALUE);
  assert_int_equal(w4a16_config_cache_store(c, &p, ks, 2), W4A16_STATUS_NULL_POINTER);
  /* a kernel outside the cache's table (same name, other address) */
  w4a16_kernel_desc copy = fake[0];
  const w4a16_kernel_desc *alien[1] = {&copy};
  assert_int_equal(w4a16_config_cache_store(c, &p, alien, 1), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "not in the cache's kernel table"));
  /* another dtype than the problem */
  const w4a16_kernel_desc *f16[1] = {&fake[5]};
  assert_int_equal(w4a16_config_cache_store(c, &p, f16, 1), W4A16_STATUS_INVALID_VALUE);
  w4a16_problem bad = prob(0, 4096, 4096);
  assert_int_equal(w4a16_config_cache_store(c, &bad, ks, 1), W4A16_STATUS_INVALID_SHAPE);
  assert_int_equal(w4a16_config_cache_size(c), 0);
  /* lookup / entry arguments */
  const w4a16_kernel_desc *got[4];
  int n = 7;
  assert_int_equal(w4a16_config_cache_lookup(c, &p, got, 0, &n), W4A16_STATUS_INVALID_VALUE);
  assert_int_equal(w4a16_config_cache_lookup(NULL, &p, got, 4, &n), W4A16_STATUS_NULL_POINTER);
  expect_status(w4a16_config_cache_lookup(c, NULL, got, 4, &n), W4A16_STATUS_NULL_POINTER, "problem is NULL");
  const char *lookup_null = "kernels or returned is NULL";
  expect_status(w4a16_config_cache_lookup(c, &p, NULL, 4, &n), W4A16_STATUS_NULL_POINTER, lookup_null);
  expect_status(w4a16_config_cache_lookup(c, &p, got, 4, NULL), W4A16_STATUS_NULL_POINTER, lookup_null);
  assert_int_equal(w4a16_config_cache_lookup(c, &p, got, 4, &n), W4A16_STATUS_NO_KERNEL);
  assert_int_equal(n, 0);
  w4a16_problem key;
  assert_int_equal(w4a16_config_cache_entry(c, 0, &key, got, 4, &n), W4A16_STATUS_INVALID_VALUE);
  const char *entry_null = "cache, key, kernels or returned is NULL";
  expect_status(w4a16_config_cache_entry(NULL, 0, &key, got, 4, &n), W4A16_STATUS_NULL_POINTER, entry_null);
  expect_status(w4a16_config_cache_entry(c, 0, NULL, got, 4, &n), W4A16_STATUS_NULL_POINTER, entry_null);
  expect_status(w4a16_config_cache_entry(c, 0, &key, NULL, 4, &n), W4A16_STATUS_NULL_POINTER, entry_null);
  expect_status(w4a16_config_cache_entry(c, 0, &key, got, 4, NULL), W4A16_STATUS_NULL_POINTER, entry_null);
  expect_status(w4a16_config_cache_reload(NULL), W4A16_STATUS_NULL_POINTER, "cache is NULL");
  expect_status(w4a16_cache_env_current(NULL), W4A16_STATUS_NULL_POINTER, "env is NULL");
  assert_int_equal(w4a16_config_cache_open(s->path, &env, fake, NFAKE, NULL), W4A16_STATUS_NULL_POINTER);
  w4a16_config_cache *x = (w4a16_config_cache *)1;
  expect_status(w4a16_config_cache_open(s->path, &env, NULL, 3, &x), W4A16_STATUS_NULL_POINTER,
                "table is NULL with count 3");
  assert_null(x);
  x = (w4a16_config_cache *)1;
  assert_int_equal(w4a16_config_cache_open("", &env, fake, NFAKE, &x), W4A16_STATUS_INVALID_VALUE);
  assert_null(x);
  w4a16_config_cache_close(NULL);
  assert_int_equal(w4a16_config_cache_size(NULL), 0);
  w4a16_config_cache_close(c);
}

/* folders are created; an unwritable place is IO_ERROR but the entry stays in memory */
static void test_paths_and_io_errors(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  char deep[400];
  snprintf(deep, sizeof deep, "%s/a/b/c/configs.tsv", s->dir);
  w4a16_config_cache *c = open_cache(deep, &env);
  w4a16_problem p = prob(16, 4096, 4096);
  store1(c, &p, &fake[0], NULL);
  struct stat st;
  assert_int_equal(stat(deep, &st), 0);
  w4a16_config_cache_close(c);

  char bad[400];
  snprintf(bad, sizeof bad, "%s/file/configs.tsv", s->dir);
  char file[400];
  snprintf(file, sizeof file, "%s/file", s->dir);
  spit(file, "x", 1); /* a file where a folder would have to be */
  c = open_cache(bad, &env);
  const w4a16_kernel_desc *ks[1] = {&fake[0]};
  assert_int_equal(w4a16_config_cache_store(c, &p, ks, 1), W4A16_STATUS_IO_ERROR);
  assert_true(strlen(w4a16_last_error_message()) > 0);
  const w4a16_kernel_desc *got[4];
  assert_int_equal(lookup(c, &p, got), 1);
  w4a16_config_cache_close(c);
}

static void test_default_path(void **state) {
  (void)state;
  char path[512];
  const char *old_cache = getenv("W4A16_CACHE_PATH"), *old_xdg = getenv("XDG_CACHE_HOME"), *old_home = getenv("HOME");
  char *sc = old_cache ? strdup(old_cache) : NULL, *sx = old_xdg ? strdup(old_xdg) : NULL,
       *sh = old_home ? strdup(old_home) : NULL;
  setenv("W4A16_CACHE_PATH", "/some/where/c.tsv", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  assert_int_equal(w4a16_cache_default_path(path, sizeof path), W4A16_STATUS_OK);
  assert_string_equal(path, "/some/where/c.tsv");
  setenv("W4A16_CACHE_PATH", "", 1);
  assert_int_equal(w4a16_cache_default_path(path, sizeof path), W4A16_STATUS_OK);
  assert_string_equal(path, "/xdg/w4a16/configs.tsv");
  unsetenv("W4A16_CACHE_PATH");
  setenv("XDG_CACHE_HOME", "relative", 1); /* not absolute: ignored, as the XDG spec says */
  assert_int_equal(w4a16_cache_default_path(path, sizeof path), W4A16_STATUS_OK);
  assert_string_equal(path, "/home/u/.cache/w4a16/configs.tsv");
  unsetenv("XDG_CACHE_HOME");
  assert_int_equal(w4a16_cache_default_path(path, sizeof path), W4A16_STATUS_OK);
  assert_string_equal(path, "/home/u/.cache/w4a16/configs.tsv");
  assert_int_equal(w4a16_cache_default_path(path, 8), W4A16_STATUS_INVALID_VALUE);
  assert_int_equal(w4a16_cache_default_path(NULL, 8), W4A16_STATUS_NULL_POINTER);
  if (sc) setenv("W4A16_CACHE_PATH", sc, 1); else unsetenv("W4A16_CACHE_PATH");
  if (sx) setenv("XDG_CACHE_HOME", sx, 1); else unsetenv("XDG_CACHE_HOME");
  if (sh) setenv("HOME", sh, 1); else unsetenv("HOME");
  free(sc);
  free(sx);
  free(sh);
}

/* control characters in the device name never break the line format */
static void test_device_name_sanitized(void **state) {
  scratch *s = *state;
  w4a16_cache_env env = fake_env();
  snprintf(env.device_name, sizeof env.device_name, "Weird\tGPU\nname");
  w4a16_config_cache *c = open_cache(s->path, &env);
  w4a16_problem p = prob(16, 4096, 4096);
  store1(c, &p, &fake[0], NULL);
  w4a16_config_cache_close(c);
  log_reset();
  c = open_cache(s->path, &env);
  assert_int_equal(w4a16_config_cache_size(c), 1);
  assert_int_equal(g_warnings, 0);
  w4a16_config_cache_close(c);
}

static void test_log_levels(void **state) {
  (void)state;
  assert_string_equal(w4a16_log_level_name(W4A16_LOG_DEBUG), "debug");
  assert_string_equal(w4a16_log_level_name(W4A16_LOG_WARNING), "warning");
  assert_string_equal(w4a16_log_level_name(W4A16_LOG_ERROR), "error");
  assert_string_equal(w4a16_log_level_name((w4a16_log_level)42), "?");
  w4a16_set_log_callback(capture, NULL);
  log_reset();
  w4a16_log(W4A16_LOG_WARNING, "hello %d", 42);
  assert_string_equal(g_log, "hello 42\n");
  assert_int_equal(g_warnings, 1);
  w4a16_set_log_callback(NULL, NULL);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_m_bucket), T(test_round_trip),      T(test_stale),
      T(test_truncated),               T(test_corrupt),         T(test_unknown_kernel), T(test_many_entries),
      T(test_fuzz_parser),             T(test_processes),       T(test_merge),
      T(test_threads),                 T(test_store_arguments), T(test_paths_and_io_errors),
      cmocka_unit_test(test_default_path), T(test_device_name_sanitized), cmocka_unit_test(test_log_levels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

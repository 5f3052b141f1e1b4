/* test_cli.c - the `w4a16` command's arguments: every bad argument exits with
   status 2 and a message naming it; --help of each command exits 0. Each case
   runs w4a16_cli_main (tools/w4a16.c) in a child process with its output
   captured. No GPU needed (the GPU is hidden from the children). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "w4a16/w4a16.h"

int w4a16_cli_main(int argc, char **argv);

typedef struct result {
  int status;
  char out[65536];
  char err[8192];
} result;

static result g_r;

static void read_all(int fd, char *buf, size_t cap) {
  size_t n = 0;
  if (lseek(fd, 0, SEEK_SET) != 0) return;
  for (;;) {
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r <= 0) break;
    n += (size_t)r;
    if (n == cap - 1) break;
  }
  buf[n] = '\0';
}

/* runs `w4a16 args...` (NULL-terminated) in a child; fills g_r */
static const result *run(const char *first, ...) {
  char *argv[32];
  int argc = 0;
  argv[argc++] = (char *)"w4a16";
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *)) argv[argc++] = (char *)a;
  va_end(ap);
  argv[argc] = NULL;

  char out_path[] = "/tmp/w4a16_test_cli_out_XXXXXX", err_path[] = "/tmp/w4a16_test_cli_err_XXXXXX";
  int out = mkstemp(out_path), err = mkstemp(err_path);
  assert_true(out >= 0 && err >= 0);
  unlink(out_path);
  unlink(err_path);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(out, 1);
    dup2(err, 2);
    setenv("CUDA_VISIBLE_DEVICES", "", 1); /* argument errors must not need a GPU */
    setenv("W4A16_CACHE_PATH", "/nonexistent/w4a16_test_cli/configs.tsv", 1);
    int rc = w4a16_cli_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  g_r.status = WEXITSTATUS(st);
  read_all(out, g_r.out, sizeof g_r.out);
  read_all(err, g_r.err, sizeof g_r.err);
  close(out);
  close(err);
  return &g_r;
}

/* exit status 2, and stderr names every given word */
static void expect_usage(const result *r, const char *w1, const char *w2) {
  if (r->status != 2 || (w1 && !strstr(r->err, w1)) || (w2 && !strstr(r->err, w2)))
    fprintf(stderr, "status %d, stderr:\n%s\n", r->status, r->err);
  assert_int_equal(r->status, 2);
  if (w1) assert_non_null(strstr(r->err, w1));
  if (w2) assert_non_null(strstr(r->err, w2));
}

static void test_top_level(void **state) {
  (void)state;
  expect_usage(run(NULL), "usage", NULL);
  expect_usage(run("frobnicate", NULL), "frobnicate", NULL);
  expect_usage(run("--frobnicate", NULL), "--frobnicate", NULL);
  const result *r = run("--help", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "usage: w4a16"));
  assert_non_null(strstr(r->out, "tune"));
  r = run("--version", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "w4a16 "));
}

static void test_list(void **state) {
  (void)state;
  const result *r = run("list", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, " kernels"));
  r = run("list", "--tsv", NULL);
  assert_int_equal(r->status, 0);
  assert_true(strncmp(r->out, "name\tfamily\t", 12) == 0);
  r = run("list", "no_such_kernel_at_all", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "0 of "));
  r = run("list", "--help", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "usage: w4a16 list"));
  expect_usage(run("list", "--bogus", NULL), "--bogus", NULL);
  expect_usage(run("list", "a*", "second", NULL), "second", NULL);
  /* a run of '*'s (a recursive matcher backtracked exponentially: 10 stars ran past a minute) */
  r = run("list", "****************************************Q", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "0 of "));
  /* --shape: each kernel can implement the problem ("yes") or says why not */
  r = run("list", "--tsv", "--shape", "100,2368,1664", "--mode", "fgsz", "--group", "0", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "\tcan_implement\n"));
  assert_true(strstr(r->out, "\tyes\n") || strstr(r->out, "W4A16_STATUS_"));
  r = run("list", "--shape", "3,4096,4096", "--dtype", "f16", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "can_implement"));
  expect_usage(run("list", "--shape", "3,4096", NULL), "--shape", NULL);
  expect_usage(run("list", "--shape", "3,64,64", "--mode", "xx", NULL), "--mode", NULL);
}

static void test_tune_errors(void **state) {
  (void)state;
  expect_usage(run("tune", NULL), "--n", "--model");
  expect_usage(run("tune", "--m", "abc", "--n", "4096", "--k", "4096", NULL), "--m", "abc");
  expect_usage(run("tune", "--m", "0", "--n", "4096", "--k", "4096", NULL), "--m", "'0'");
  expect_usage(run("tune", "--m", "16,", "--n", "4096", "--k", "4096", NULL), "--m", NULL);
  expect_usage(run("tune", "--m", "-3", "--n", "4096", "--k", "4096", NULL), "--m", "-3");
  expect_usage(run("tune", "--n", "4096x", "--k", "4096", NULL), "--n", "4096x");
  expect_usage(run("tune", "--n", "4096", "--k", "", NULL), "--k", NULL);
  expect_usage(run("tune", "--n", "4096", NULL), "--k", NULL);
  expect_usage(run("tune", "--k", "4096", NULL), "--n", NULL);
  expect_usage(run("tune", "--model", "llama2-7b", NULL), "--model", "llama2-7b");
  expect_usage(run("tune", "--model", "llama3-8b", "--n", "4096", "--k", "4096", NULL), "--model", NULL);
  expect_usage(run("tune", "--model", "llama3-8b", "--dtype", "fp8", NULL), "--dtype", "fp8");
  expect_usage(run("tune", "--model", "llama3-8b", "--mode", "int3", NULL), "--mode", "int3");
  expect_usage(run("tune", "--model", "llama3-8b", "--group", "48", NULL), "--group", "48");
  expect_usage(run("tune", "--model", "llama3-8b", "--top", "0", NULL), "--top", NULL);
  expect_usage(run("tune", "--model", "llama3-8b", "--iterations", "many", NULL), "--iterations", "many");
  expect_usage(run("tune", "--model", "llama3-8b", "--warmup", "-1", NULL), "--warmup", NULL);
  expect_usage(run("tune", "--model", "llama3-8b", "--seed", "x", NULL), "--seed", NULL);
  expect_usage(run("tune", "--model", "llama3-8b", "--cache", "", NULL), "--cache", NULL);
  expect_usage(run("tune", "--model", "llama3-8b", "--dump", "", NULL), "--dump", NULL);
  expect_usage(run("tune", "--model", "llama3-8b", "--frobnicate", NULL), "--frobnicate", NULL);
  expect_usage(run("tune", "--model", "llama3-8b", "stray", NULL), "stray", NULL);
  expect_usage(run("tune", "--m", NULL), "--m", "needs a value");
  expect_usage(run("tune", "--model", NULL), "--model", "needs a value");
  const result *r = run("tune", "--help", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "usage: w4a16 tune"));
  assert_non_null(strstr(r->out, "--compare-heuristic"));
}

/* valid arguments without a GPU: a runtime failure (1), not a usage error */
static void test_tune_without_gpu(void **state) {
  (void)state;
  const result *r = run("tune", "--model", "llama3-8b", "--m", "1", "--no-store", NULL);
  assert_int_equal(r->status, 1);
  assert_non_null(strstr(r->err, "GPU"));
  r = run("tune", "--compare-heuristic", "--no-store", NULL);
  assert_int_equal(r->status, 1);
}

/* --replay: the heuristic against recorded times, no GPU */
static void test_replay(void **state) {
  (void)state;
  char path[] = "/tmp/w4a16_test_cli_dump_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char *text =
      "# w4a16 tune --dump\tdevice=Fake\tsm_count=132\tcc=90\tlibrary=0.1.0\n"
      "m\tn\tk\tgroup\tmode\tdtype\tkernel\tfamily\ttile_n\ttile_m\ttile_k\tcluster\tschedule\tstages\tstatus\t"
      "median_us\ttflops\tgbps\theur_rank\theur_rule\theur_est_us\tsplit_k\twaves_eff\n"
      "16\t4096\t4096\t128\tfgs\tbf16\tw4a16_a\tsm80\t128\t16\t128\t1x1x1\tmultistage\t3\tW4A16_STATUS_OK\t"
      "12.5\t1\t1\t1\tsm80\t1\t1\t1\n"
      "16\t4096\t4096\t128\tfgs\tbf16\tw4a16_b\tsm80\t128\t16\t128\t1x1x1\tmultistage\t3\tW4A16_STATUS_OK\t"
      "10.0\t1\t1\t2\tsm80\t1\t1\t1\n";
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  const result *r = run("tune", "--replay", path, NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "quality bar"));
  assert_non_null(strstr(r->out, "w4a16_b")); /* the recorded best */
  expect_usage(run("tune", "--replay", path, "--m", "16", NULL), "--replay", NULL);
  /* --fit: a rule table and its evaluation on the same file */
  r = run("tune", "--fit", path, NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "rule table to paste"));
  assert_non_null(strstr(r->out, "quality bar"));
  expect_usage(run("tune", "--fit", path, "--replay", path, NULL), "--fit", NULL);
  expect_usage(run("tune", "--fit", "", NULL), "--fit", NULL);
  expect_usage(run("tune", "--fit", path, "--model", "llama3-8b", NULL), "--fit", NULL);
  expect_usage(run("tune", "--replay", "", NULL), "--replay", NULL);
  /* a device line whose SM count is not a number: status 2 naming the value */
  fd = open(path, O_WRONLY | O_TRUNC);
  assert_true(fd >= 0);
  const char *bad_sm = "# w4a16 tune --dump\tdevice=Fake\tsm_count=13x\tcc=90\n";
  assert_int_equal(write(fd, bad_sm, strlen(bad_sm)), (ssize_t)strlen(bad_sm));
  close(fd);
  r = run("tune", "--replay", path, NULL);
  assert_int_equal(r->status, 2);
  assert_non_null(strstr(r->err, "sm_count '13x'"));
  /* not a dump: status 2 naming the file */
  fd = open(path, O_WRONLY | O_TRUNC);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "garbage\tline\n", 13), 13);
  close(fd);
  expect_usage(run("tune", "--replay", path, NULL), path, NULL);
  /* a row whose time is not a positive number, or whose problem no kernel can have: status 2 naming
     the line */
  const char *bad_rows[2] = {
      "16\t4096\t4096\t128\tfgs\tbf16\tw4a16_a\tsm80\t128\t16\t128\t1x1x1\tmultistage\t3\tW4A16_STATUS_OK\t"
      "nan\t1\t1\t1\tsm80\t1\t1\t1\n",
      "16\t4100\t4096\t128\tfgs\tbf16\tw4a16_a\tsm80\t128\t16\t128\t1x1x1\tmultistage\t3\tW4A16_STATUS_OK\t"
      "12.5\t1\t1\t1\tsm80\t1\t1\t1\n"};
  for (int i = 0; i < 2; ++i) {
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    const char *head = "# w4a16 tune --dump\tdevice=Fake\tsm_count=132\tcc=90\tlibrary=0.1.0\n";
    assert_int_equal(write(fd, head, strlen(head)), (ssize_t)strlen(head));
    assert_int_equal(write(fd, bad_rows[i], strlen(bad_rows[i])), (ssize_t)strlen(bad_rows[i]));
    close(fd);
    expect_usage(run("tune", "--replay", path, NULL), "line 2", NULL);
  }
  /* the header's mem_gbps= keys the H200 rows: 8192x8192 at M = 1 takes the H200
     row's 32x8x1024 at 4915 GB/s and the H100 row's class without the field; a bad value is refused */
  const char *dec_rows =
      "1\t8192\t8192\t128\tfgs\tbf16\tw4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma\tgemv\t32\t8\t1024\t1x1x1\ttma\t3\t"
      "W4A16_STATUS_OK\t12.5\t1\t1\t1\tx\t1\t1\t1\n"
      "1\t8192\t8192\t128\tfgs\tbf16\tw4a16_gemv_bf16_u4_fgs_n32_m4_k1024_s4_tma\tgemv\t32\t4\t1024\t1x1x1\ttma\t4\t"
      "W4A16_STATUS_OK\t12.0\t1\t1\t2\tx\t1\t1\t1\n";
  const char *heads[3] = {"# w4a16 tune --dump\tdevice=Fake\tsm_count=132\tcc=90\tmem_gbps=4915\tlibrary=0.1.0\n",
                          "# w4a16 tune --dump\tdevice=Fake\tsm_count=132\tcc=90\tlibrary=0.1.0\n",
                          "# w4a16 tune --dump\tdevice=Fake\tsm_count=132\tcc=90\tmem_gbps=-5\tlibrary=0.1.0\n"};
  /* a W4A16_KERNELS subset may lack the kernels these rows name: then only the status is checked */
  const int dec_built = w4a16_kernel_find("w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma") &&
                        w4a16_kernel_find("w4a16_gemv_bf16_u4_fgs_n32_m4_k1024_s4_tma");
  if (!dec_built) fprintf(stderr, "the H100 / H200 decode rows' kernels are not built: their picks not checked\n");
  for (int i = 0; i < 3; ++i) {
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, heads[i], strlen(heads[i])), (ssize_t)strlen(heads[i]));
    assert_int_equal(write(fd, dec_rows, strlen(dec_rows)), (ssize_t)strlen(dec_rows));
    close(fd);
    if (i == 2) {
      expect_usage(run("tune", "--replay", path, NULL), "mem_gbps '-5'", NULL);
      continue;
    }
    r = run("tune", "--replay", path, NULL);
    assert_int_equal(r->status, 0);
    if (dec_built)
      assert_non_null(strstr(r->out, i == 0 ? "| w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma | h200-m1-1-n6145-8192-k0-8192 |"
                                            : "| w4a16_gemv_bf16_u4_fgs_n32_m4_k1024_s4_tma | h100-m1-1-n6145-16384 |"));
  }
  unlink(path);
  r = run("tune", "--replay", "/nonexistent/w4a16_dump.tsv", NULL);
  assert_int_equal(r->status, 1);
  assert_non_null(strstr(r->err, "/nonexistent/w4a16_dump.tsv"));
}

static void test_info(void **state) {
  (void)state;
  const result *r = run("info", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "library:"));
  assert_non_null(strstr(r->out, "built for:"));
  assert_non_null(strstr(r->out, "GPU:"));
  assert_non_null(strstr(r->out, "/nonexistent/w4a16_test_cli/configs.tsv"));
  r = run("info", "--help", NULL);
  assert_int_equal(r->status, 0);
  assert_non_null(strstr(r->out, "usage: w4a16 info"));
  expect_usage(run("info", "extra", NULL), "extra", NULL);
  expect_usage(run("info", "--verbose", NULL), "--verbose", NULL);
}

static void test_bench(void **state) {
  (void)state;
  const result *r = run("bench", "--help", NULL);
  assert_int_equal(r->status, 0);
  assert_true(strstr(r->out, "usage") || strstr(r->out, "Usage"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_top_level), cmocka_unit_test(test_list),  cmocka_unit_test(test_tune_errors),
      cmocka_unit_test(test_tune_without_gpu), cmocka_unit_test(test_info), cmocka_unit_test(test_bench), cmocka_unit_test(test_replay),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

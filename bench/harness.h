/* harness.h - the benchmark harness over every registered W4A16 kernel.
   `w4a16_bench` (bench/main.c) and `w4a16 bench` (tools/) both run it. */
#ifndef W4A16_BENCH_HARNESS_H
#define W4A16_BENCH_HARNESS_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parse argv (argv[0] is the program name; `--help` lists the options), run the
 * benchmark, print the tables on stdout (text, --csv or --json) and progress on
 * stderr. Returns the process exit status: 0 done (some kernels may have been
 * skipped; they are listed), 1 a CUDA or memory failure stopped the run,
 * 2 bad arguments or no GPU (one line on stderr).
 */
int w4a16_bench_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif

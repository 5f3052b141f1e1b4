/* main.c - the w4a16_bench program: see bench/harness.h, or run it with --help. */
#include "harness.h"

int main(int argc, char **argv) { return w4a16_bench_main(argc, argv); }

#!/usr/bin/env bash
# device_check.sh BUILD_DIR [what...] - run on a GPU machine from the repository root.
# what: tests (ctest, GPU tests included), sanitize (compute-sanitizer memcheck/racecheck/synccheck
# on one kernel per family/schedule), bench (the harness on the default problems), compare
# (heuristic vs profiled best). Logs go to $OUT (or ./device-logs). Host libraries the build
# machine had (cmocka, jansson) may be carried in .carry/lib.
set -u
BUILD=${1:-build}; shift || true
WHAT=${*:-tests sanitize bench}
OUT=${OUT:-$PWD/device-logs}; mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader | tee "$OUT/device.txt"
for w in $WHAT; do
  case $w in
    tests)
      (cd "$BUILD" && timeout 900 ctest --output-on-failure -j4) > "$OUT/ctest.log" 2>&1
      echo "ctest exit $?"; grep -E "tests passed|Failed|\*\*\*|FAILED" "$OUT/ctest.log" | head -40
      "$BUILD/tests/test_gpu_kernels" > "$OUT/gpu_kernels.log" 2>&1
      grep -E "worst rel error" "$OUT/gpu_kernels.log" | sort -k5 -g | tail -5 ;;
    sanitize)
      : > "$OUT/sanitize.log"
      for pat in ${SANITIZE_KERNELS:-'w4a16_sm80_bf16_u4_fgsz_128x16x128_s4' 'w4a16_gemv_bf16_u4_fgsz_*' 'w4a16_sm90_bf16_u4_fgs_*cooperative' 'w4a16_sm90_bf16_u4_fgs_*pingpong'}; do
        for tool in memcheck racecheck synccheck; do
          echo "== $tool $pat" >> "$OUT/sanitize.log"
          W4A16_TEST_FILTER="$pat" W4A16_TEST_QUICK=1 timeout 300 compute-sanitizer --tool $tool --print-limit 5 \
            "$BUILD/tests/test_gpu_kernels" >> "$OUT/sanitize.log" 2>&1
          echo "   exit $?" >> "$OUT/sanitize.log"
        done
      done
      grep -E "^==|exit|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize.log" | paste - - - | head -40 ;;
    bench)
      timeout 500 "$BUILD/bench/w4a16_bench" --top 5 --json -o "$OUT/bench.json" > "$OUT/bench.txt" 2> "$OUT/bench.err"
      echo "bench exit $?"; tail -30 "$OUT/bench.txt" ;;
    compare)
      timeout 500 "$BUILD/tools/w4a16" tune --compare-heuristic --no-store --dump "$OUT/dump.tsv" > "$OUT/compare.md" 2> "$OUT/compare.err"
      echo "compare exit $?"; tail -15 "$OUT/compare.md" ;;
  esac
done

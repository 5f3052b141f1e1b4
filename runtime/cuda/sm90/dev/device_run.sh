#!/bin/bash
# One device session for the sm90 dev harness (run from the repo root on the GPU machine):
#   runtime/cuda/sm90/dev/device_run.sh BIN_DIR "TEST_PATTERN" "SAN_PATTERN" "BENCH_PATTERN" "M list" "layers"
# Logs go to $OUT (test.log, sanitizer.log, bench.log). Every test runs in its own process
# under a timeout so a hang or a trap costs one kernel, not the whole call.
BIN=$1/sm90_devtest
TESTPAT=$2; SANPAT=$3; BENCHPAT=$4; MS=${5:-1,16,64,256,1024,4096}; LAYERS=${6:-01234567}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
CUBLAS_PY=$(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + "/lib")' 2>/dev/null)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$CUBLAS_PY:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv,noheader | tee "$OUT/device.txt"
if [ -n "$TESTPAT" ]; then
  for k in $($BIN names "$TESTPAT"); do
    timeout 60 $BIN test "$k" > "$OUT/t.txt" 2>&1
    rc=$?
    grep -E "^(FAIL|PASS)|error|rc=" "$OUT/t.txt" | head -20 >> "$OUT/test.log"
    echo "exit $rc $k" >> "$OUT/test.log"
  done
  rm -f "$OUT/t.txt"
  grep -c PASS "$OUT/test.log"; grep -E "FAIL|error" "$OUT/test.log" | head -30
fi
if [ -n "$SANPAT" ]; then
  for k in $(echo "$SANPAT" | tr ',' ' '); do
    for tool in memcheck racecheck synccheck; do
      timeout 120 compute-sanitizer --tool $tool --print-limit 5 $BIN test "$k" quick > "$OUT/san_${tool}_tmp.txt" 2>&1
      echo "== $tool $k exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test:' "$OUT/san_${tool}_tmp.txt" | tr '\n' ' ')" >> "$OUT/sanitizer.log"
      grep -m5 -E "Invalid|Race|Barrier|error" "$OUT/san_${tool}_tmp.txt" >> "$OUT/sanitizer.log"
    done
  done
  rm -f "$OUT"/san_*_tmp.txt
  cat "$OUT/sanitizer.log"
fi
if [ -n "$BENCHPAT" ]; then
  timeout 250 $BIN bench "$BENCHPAT" "$MS" "$LAYERS" 2>&1 | tee "$OUT/bench.log"
fi

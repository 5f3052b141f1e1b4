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
  mkdir -p /tmp/tl
  $BIN names "$TESTPAT" | xargs -P 8 -I{} bash -c "timeout 90 $BIN test {} > /tmp/tl/{}.txt 2>&1; echo \"exit \$? {}\" >> /tmp/tl/{}.txt"
  for f in /tmp/tl/*.txt; do grep -E "^(FAIL|PASS)|error|rc=|^exit" "$f" | head -20; done > "$OUT/test.log"
  echo "PASS: $(grep -c ^PASS "$OUT/test.log")  FAIL lines: $(grep -c FAIL "$OUT/test.log")"; grep -E "FAIL|error" "$OUT/test.log" | head -30
fi
if [ -n "$SANPAT" ]; then
  mkdir -p /tmp/sl
  for k in $(echo "$SANPAT" | tr ',' ' '); do for tool in memcheck racecheck synccheck; do echo "$tool $k"; done; done |
    xargs -P 8 -L 1 bash -c 'timeout 200 compute-sanitizer --tool $0 --print-limit 5 '"$BIN"' test $1 quick > /tmp/sl/$0_$1.txt 2>&1; echo "== $0 $1 exit $?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test:" /tmp/sl/$0_$1.txt | tr "\n" " ")"; grep -m5 -E "Invalid|Race|Barrier|rror:" /tmp/sl/$0_$1.txt' > "$OUT/sanitizer.log" 2>&1
  cat "$OUT/sanitizer.log"
fi
if [ -n "$BENCHPAT" ]; then
  # bench only kernels that passed their tests in this call (a hang would eat the call)
  if [ -f "$OUT/test.log" ]; then
    ok=$(grep ^PASS "$OUT/test.log" | awk '{print $2}' | tr -d ':' | tr '\n' ',')
    BENCHPAT=$($BIN names "$BENCHPAT" | grep -Fx -f <(echo "$ok" | tr ',' '\n') | tr '\n' ',')
    [ -z "$BENCHPAT" ] && { echo "no kernel passed; no bench"; exit 0; }
  fi
  BENCH_ALL=1 timeout 250 $BIN bench "$BENCHPAT" "$MS" "$LAYERS" 2>&1 | tee "$OUT/bench.log"
fi

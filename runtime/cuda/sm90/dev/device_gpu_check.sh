#!/bin/bash
# device_gpu_check.sh BUILD_DIR - one device call for the sm90 family with the project's own
# binaries: test_gpu_kernels (split over parallel processes by tile), compute-sanitizer
# memcheck/racecheck (quick cases) on one kernel per schedule (+ a cluster), then w4a16_bench
# alone on the GPU. Logs under $OUT. Needs .carry/lib (cmocka, jansson) carried.
B=${1:-build-sm90b}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader | tee "$OUT/device.txt"
T0=$(date +%s)
i=0
for f in ${TEST_FILTERS:-'w4a16_sm90_*_256x16x128_*' 'w4a16_sm90_*_256x64x128_*' 'w4a16_sm90_*_128x128x128_*' 'w4a16_sm90_*_128x256x64_*' 'w4a16_sm90_*_128x64x128_*' 'w4a16_sm90_*_128x16x128_*'}; do
  (W4A16_TEST_FILTER="$f" timeout ${TEST_TIMEOUT:-170} "$B/tests/test_gpu_kernels" > "$OUT/gpu_$i.log" 2>&1; echo "exit $? $f" >> "$OUT/gpu_$i.log") &
  i=$((i+1))
done
for k in ${SAN_KERNELS:-w4a16_sm90_bf16_u4_fgs_256x16x128_1x1x1_cooperative w4a16_sm90_bf16_u4_fgs_128x16x128_1x1x1_pingpong w4a16_sm90_bf16_u4_fgs_128x64x128_2x1x1_cooperative}; do
  for tool in ${SAN_TOOLS:-memcheck racecheck}; do
    (W4A16_TEST_FILTER="$k" W4A16_TEST_QUICK=1 timeout ${TEST_TIMEOUT:-170} compute-sanitizer --tool $tool --print-limit 5 \
      "$B/tests/test_gpu_kernels" > "$OUT/san_${tool}_$k.log" 2>&1; echo "exit $?" >> "$OUT/san_${tool}_$k.log") &
  done
done
wait
echo "tests+sanitizers: $(( $(date +%s) - T0 )) s"
cat "$OUT"/gpu_*.log | grep -E "worst rel error|FAIL|exit|PASSED|FAILED|\[  ERROR|first" | grep -vE "^\[ +OK|^\[ RUN" | sort | uniq | head -60
for f in "$OUT"/san_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^exit' $f | tr '\n' ' ')"; done
# bench: BENCH<i>_KERNELS / BENCH<i>_M / BENCH<i>_ENV (i = 1..4), alone on the GPU, csv per set
for bi in 1 2 3 4; do
  kv=BENCH${bi}_KERNELS; mv=BENCH${bi}_M; ev=BENCH${bi}_ENV
  [ -z "${!kv:-}" ] && continue
  T1=$(date +%s)
  env ${!ev:-W4A16_BENCH_SET=$bi} timeout ${BENCH_TIMEOUT:-90} "$B/bench/w4a16_bench" --kernels "${!kv}" --m "${!mv:-1,16,64}" ${BENCH_ARGS:-} \
    --csv -q -o "$OUT/bench$bi.csv" 2> "$OUT/bench$bi.err"
  echo "bench $bi exit $? in $(( $(date +%s) - T1 )) s"
done

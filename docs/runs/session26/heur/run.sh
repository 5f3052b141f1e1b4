#!/bin/bash
# twenty-sixth session call 2 (default build of 984e840, 194 kernels): compute-sanitizer racecheck,
# synccheck and memcheck through test_gpu_gemv on the bf16 scale-only 128x8x256 (the new default tile),
# memcheck through test_gpu_kernels on every 128x8x256; then the heuristic's first pick against the
# profiled best (w4a16 tune --compare-heuristic, the eight layers x M = 1, 2, 4, ..., 4096) for
# dtype x mode combinations given as arguments ("bf16 fgs 128" ...), each with --dump
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
if [ -z "$NOSAN" ]; then
  k=w4a16_sm90_bf16_u4_fgs_128x8x256_1x1x1_cooperative
  for tool in racecheck synccheck memcheck; do
    W4A16_TEST_FILTER=$k timeout 150 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/${tool}_gemv.log 2>&1
    echo "$tool gemv rc $? $(grep -E 'SUMMARY' $L/${tool}_gemv.log | tail -1) $(grep -E 'PASSED|FAILED' $L/${tool}_gemv.log | tr '\n' ' ') ${SECONDS}s"
  done
  W4A16_TEST_FILTER='*_128x8x256_*' timeout 200 compute-sanitizer --tool memcheck ./test_gpu_kernels > $L/memcheck_kernels.log 2>&1; rc=$?
  tr '\r' '\n' < $L/memcheck_kernels.log | grep -v "^case" > $L/memcheck_kernels_summary.log; rm -f $L/memcheck_kernels.log
  echo "memcheck kernels rc $rc $(grep -E 'SUMMARY' $L/memcheck_kernels_summary.log | tail -1) $(grep -E 'PASSED|FAILED' $L/memcheck_kernels_summary.log | tr '\n' ' ') ${SECONDS}s"
fi
for c in "$@"; do
  set -- $c
  timeout 170 ./w4a16 tune --compare-heuristic --dtype $1 --mode $2 --group $3 --no-store --dump $L/heur_$1_$2_$3.tsv > $L/heur_$1_$2_$3.md 2>&1
  echo "heuristic $c rc $? $(grep 'within 10%' $L/heur_$1_$2_$3.md) ${SECONDS}s"
done

#!/bin/bash
# twenty-first session: the default build with the stronger tests (expected can_implement statuses,
# group coverage, M = 1..17 / 64 / 256, elementwise tolerance, garbage workspaces, signed scales;
# launch order, unsplit GEMV, stream-K groups, schedule asserts), the generic TMA GEMV consumer,
# compute-sanitizer on the 16-token tile's cp.async fixup
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
run() { local name=$1; shift; timeout 280 "$@" > $L/$name.log 2>&1; local rc=$?; echo "$name rc $rc $(grep -E '^\[  (PASSED|FAILED)' $L/$name.log | tr '\n' ' ') ${SECONDS}s"; [ $rc = 124 ] && grep -v "^case" $L/$name.log | tail -5; }
run gemv ./test_gpu_gemv
run kernels ./test_gpu_kernels
W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_CTAS=3 run tma_units ./test_gpu_kernels
W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_GENERIC=1 run tma_generic ./test_gpu_kernels
for k in w4a16_sm90_bf16_u4_fgs_128x16x256_1x1x1_cooperative; do
  for tool in racecheck memcheck; do
    W4A16_TEST_FILTER=$k timeout 120 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/${tool}_$k.log 2>&1; echo "$tool $k rc $? $(tail -1 $L/${tool}_$k.log) $(grep -c 'OK \]' $L/${tool}_$k.log) ok ${SECONDS}s"
  done
done

#!/bin/bash
# twentieth session call 17 (review): the default build after the stage-free wait became one helper
# (wait_free; no behaviour change): GPU tests, compute-sanitizer on four kSkRing kernels
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for t in test_gpu_gemv test_gpu_kernels; do timeout 150 ./$t > $L/$t.log 2>&1; rc=$?; echo "$t rc $rc $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"; [ $rc = 124 ] && exit 1; done
for k in w4a16_sm90_f16_u4_fgsz_128x256x64_2x1x1_cooperative w4a16_sm90_bf16_u4_fgs_128x256x64_1x1x1_cooperative w4a16_sm90_bf16_u4_pc_128x256x64_2x1x1_cooperative w4a16_sm90_f16_u4_fgs_128x256x64_1x1x1_cooperative; do
  for tool in racecheck synccheck memcheck; do
    W4A16_TEST_FILTER=$k timeout 100 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/${tool}_$k.log 2>&1; echo "$tool $k rc $? $(tail -1 $L/${tool}_$k.log) $(grep -c 'OK \]' $L/${tool}_$k.log) ok ${SECONDS}s"
  done
done

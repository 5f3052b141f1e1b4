#!/bin/bash
# twenty-first session, review: the cp.async helpers moved to common/cp_async.cuh (the GEMV family's
# and the sm90 fixup's; no behaviour change): default build's GPU tests, compute-sanitizer on a
# cp.async GEMV kernel and on 128x16x256, two bench problems against section 7's numbers
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for t in test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; rc=$?; echo "$t rc $rc $(grep -E '^\[  (PASSED|FAILED)' $L/$t.log | tr '\n' ' ') ${SECONDS}s"; [ $rc = 124 ] && exit 1; done
for k in w4a16_gemv_bf16_u4_fgs_n16_m8_k512_s4_sk8 w4a16_sm90_bf16_u4_fgs_128x16x256_1x1x1_cooperative; do
  for tool in racecheck memcheck; do
    W4A16_TEST_FILTER=$k W4A16_TEST_QUICK=1 timeout 120 compute-sanitizer --tool $tool ./test_gpu_kernels > $L/${tool}_$k.log 2>&1; echo "$tool $k rc $? $(tail -1 $L/${tool}_$k.log) ${SECONDS}s"
  done
done
B='*sm90_bf16_u4_fgs_128x16x256_1x1x1*'
for r in 1 2 3; do for c in "$B 16 10240x8192" "$B 1 10240x8192"; do set -f; set -- $c; set +f
  ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o /tmp/o.csv; tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv; done; done
head -1 /tmp/o.csv > $L/header.csv

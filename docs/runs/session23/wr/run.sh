#!/bin/bash
# twenty-third session call 12: the CTA leaves after its tensor stores have read shared memory
# (cp.async.bulk.wait_group.read) instead of after their writes (new) against daccb20 (old): the
# K-pair test (launch order included) on the new build, A/B three rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 150 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "PASSED|FAIL" $L/tg.txt | tail -3
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'; C='*bf16_u4_fgs_128x64x256_1x1x1*'
P=("$A 1024 4096x4096" "$B 1024 6144x4096" "$A 256 8192x8192" "$C 64 10240x8192" "$A 1024 8192x8192" "$A 4096 4096x4096" "$A 1024 4096x14336")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 )); BIN=./w4a16_bench_old; [ $v = 1 ] && BIN=./w4a16_bench
      set -f; timeout 60 $BIN --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

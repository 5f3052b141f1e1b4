#!/bin/bash
# twenty-fourth session call 16: the K pair's ring handoff in two halves, race-free: rank 1's first half
# contiguous into rank 0's epilogue buffer at once, the second into the ring stages freed first, rank
# 0 W4A16_SM90_KPAIR_LEAD k-blocks ahead, staging its output in the ring stages after the second
# half's (default build, new) against d6b35cd (old): GPU tests at three leads, racecheck / synccheck
# through test_gpu_gemv on the 128-row 1x1x1 tiles, then one process per problem and variant,
# rotating, three rounds (v0 old, v1 new at lead 4, v2 new at lead 2)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 150 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s" | tee -a $L/tk.txt
tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt; grep -E "PASSED|FAILED" $L/tk_summary.txt | tail -3
SECONDS=0
timeout 150 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "PASSED|FAIL|K pair:" $L/tg.txt | tail -4
for lead in 0 1000; do
  SECONDS=0
  W4A16_SM90_KPAIR_LEAD=$lead W4A16_TEST_FILTER='*_1x1x1_cooperative' timeout 150 ./test_gpu_gemv > $L/tg_$lead.txt 2>&1; echo "test_gpu_gemv lead $lead rc $? ${SECONDS}s" | tee -a $L/tg_$lead.txt; grep -E "PASSED|FAIL|K pair:" $L/tg_$lead.txt | tail -4
done
for tool in racecheck synccheck; do
  SECONDS=0
  W4A16_TEST_FILTER='*bf16_u4_fgs*_1x1x1_cooperative' timeout 200 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/san_$tool.txt 2>&1
  echo "$tool rc $? ${SECONDS}s" | tee -a $L/san_$tool.txt; grep -E "SUMMARY|PASSED|FAIL" $L/san_$tool.txt | tail -3
done
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$A 256 8192x8192" "$D 256 4096x4096" "$A 256 8192x28672" "$D 128 8192x8192" "$A 512 4096x4096" "$D 128 6144x4096"
   "$A 1024 4096x4096" "$B 256 10240x8192" "$D 256 6144x4096")
LEADS=(4 4 2)
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2; do
      v=$(( (j + r + i) % 3 )); BIN=./w4a16_bench; [ $v = 0 ] && BIN=./bench_old
      set -f; W4A16_SM90_KPAIR_LEAD=${LEADS[$v]} timeout 60 $BIN --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

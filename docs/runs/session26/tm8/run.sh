#!/bin/bash
# twenty-sixth session call 1: the tm8 default-set change (docs/runs/session25/tm8/tm8_default.diff
# applied on fc6342e; 194 kernels): test_gpu_kernels and test_gpu_gemv of the default build, then
# 128x8x256 and 128x16x256 each in its own process with cuBLAS bf16 at M = 1 / 8 on the four 70B
# layers, rotating order, three rounds (all.csv; pairs.py)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 150 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s"; tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt; grep -E "PASSED|FAILED|SKIPPED" $L/tk_summary.txt | tail -4
SECONDS=0
timeout 200 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s"; tr '\r' '\n' < $L/tg.txt | grep -v "^case" > $L/tg_summary.txt; rm -f $L/tg.txt; grep -E "PASSED|FAILED|SKIPPED" $L/tg_summary.txt | tail -4
SECONDS=0
V=("128x16x256" "128x8x256")
P=("1 10240x8192" "8 10240x8192" "1 8192x8192" "8 8192x8192" "1 57344x8192" "8 57344x8192" "1 8192x28672" "8 8192x28672")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}; m=$1; nk=$2
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      set -f; timeout 60 ./w4a16_bench --m $m --nk $nk --kernels "w4a16_sm90_bf16_u4_fgs_${V[$v]}_1x1x1_cooperative" --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

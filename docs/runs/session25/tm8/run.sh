#!/bin/bash
# twenty-fifth session call 13: 128x8x256 (non-default; wgmma N = 8) with the generator's 8 stages
# (b_t8) and with 10 (b_t10: MAX_STAGES raised to 10 for the build; 22.5 KB stages, 25 % more copies
# in flight) against the default 128x16x256 (b_def, 8 stages) at M = 1 and 8 on the four 70B layers.
# GPU tests of b_t10's kernel; one process per problem and variant, rotating, three rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 120 ./tk_t10 > $L/tk.txt 2>&1; echo "test_gpu_kernels (t10) rc $? ${SECONDS}s"; tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt; grep -E "PASSED|FAILED" $L/tk_summary.txt | tail -3
SECONDS=0
V=("b_def 128x16x256" "b_t8 128x8x256" "b_t10 128x8x256")
P=("1 10240x8192" "8 10240x8192" "1 8192x8192" "8 8192x8192" "1 57344x8192" "8 57344x8192" "1 8192x28672" "8 8192x28672")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}; m=$1; nk=$2
    for j in 0 1 2; do
      v=$(( (j + r + i) % 3 )); set -- ${V[$v]}
      set -f; timeout 60 ./$1 --m $m --nk $nk --kernels "*bf16_u4_fgs_$2_1x1x1*" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

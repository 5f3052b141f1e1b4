#!/bin/bash
# twenty-fifth session call 1: why a 128-token tile runs ~12 % slower per FLOP than 128x256.
# Subset builds of HEAD d5532da (128x256x64, 128x128x128, 128x128x64; bf16 fgs 1x1x1): "sub" as built,
# "nc" with session23/power/diag_nocvt.diff (no conversion, no scale: wrong results). One bench process
# per problem x kernel x variant, rotating, three rounds; then ncu (base clocks) on the as-built kernels.
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
P=("128x256x64 1024 4096x4096" "128x256x64 256 8192x8192" "128x128x128 512 4096x4096" "128x128x128 256 8192x8192"
   "128x128x64 512 4096x4096" "128x128x64 256 8192x8192")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    for j in 0 1; do
      v=$(( (j + r + i) % 2 )); BIN=./bench_sub; [ $v = 1 ] && BIN=./bench_nc
      set -f
      timeout 60 $BIN --m $2 --nk $3 --kernels "*bf16_u4_fgs_$1_1x1x1*" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
for t in 128x256x64:1024 128x128x128:512 128x128x64:512; do
  k=${t%%:*}; m=${t##*:}
  timeout 150 ncu --target-processes all --kernel-name regex:w4a16_sm90 --launch-skip 3 --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis --section Occupancy \
    -o $L/ncu_$k ./bench_sub --m $m --nk 4096x4096 --kernels "*bf16_u4_fgs_${k}_1x1x1*" --no-cublas -q > $L/ncu_run_$k.log 2>&1
  echo "ncu $k rc $? ${SECONDS}s"
  ncu -i $L/ncu_$k.ncu-rep --print-details all > $L/ncu_$k.txt 2>&1
  ncu -i $L/ncu_$k.ncu-rep --page source --csv --print-source sass > $L/ncu_src_$k.csv 2>&1
  rm -f $L/ncu_$k.ncu-rep
done

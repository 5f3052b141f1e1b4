#!/bin/bash
# twenty-third session call 5: ncu on 64x16x256 (K split, activation thread) and 128x16x256 at
# 57344x8192 M = 16 (tile by tile): where the 64-row tile's time goes
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/w4a16_bench.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
for t in 64 128; do
  timeout 200 ncu --target-processes all --kernel-name regex:w4a16_sm90 --launch-skip 3 --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats --section Occupancy --section LaunchStats \
    -o $L/ncu_$t ./w4a16_bench --m 16 --nk 57344x8192 --kernels "*bf16_u4_fgs_${t}x16x256_1*" --no-cublas -q > $L/ncu_run_$t.log 2>&1
  echo "ncu $t rc $?"
  ncu -i $L/ncu_$t.ncu-rep --print-details all > $L/ncu_$t.txt 2>&1
  ncu -i $L/ncu_$t.ncu-rep --page source --csv --print-source sass > $L/ncu_src_$t.csv 2>&1
  rm -f $L/ncu_$t.ncu-rep
done

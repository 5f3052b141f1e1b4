#!/bin/bash
# twenty-second session call 2: ncu (isolated launch, source counters) on 128x16x256 at 10240x8192
# M = 16 and M = 1 (default-build code, b0 of call 1), and its SASS
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/b0.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
cuobjdump --dump-sass ./b0 > $L/sass.txt 2>&1; echo "sass rc $?"
for m in 16 1; do
  timeout 200 ncu --target-processes all --kernel-name regex:w4a16_sm90 --launch-skip 3 --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats \
    -o $L/ncu_m$m ./b0 --m $m --nk 10240x8192 --kernels '*128x16x256*' --no-cublas -q > $L/ncu_run_m$m.log 2>&1
  echo "ncu m$m rc $?"
  ncu -i $L/ncu_m$m.ncu-rep --print-details all > $L/ncu_m$m.txt 2>&1
  ncu -i $L/ncu_m$m.ncu-rep --page source --csv --print-source sass > $L/ncu_src_m$m.csv 2>&1
  rm -f $L/ncu_m$m.ncu-rep
done

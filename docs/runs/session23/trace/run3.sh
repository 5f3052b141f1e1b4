#!/bin/bash
# twenty-third session call 10: the timeline (trace2.diff: call 8's plus the K pair's handoff, slot 9)
# after the stmatrix epilogue (daccb20): 128x256x64 on 8192x8192 M = 256 (K pair), 4096x4096 M = 1024
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
A='*bf16_u4_fgs_128x256x64_1x1x1*'
for c in "$A 256 8192x8192 k8" "$A 1024 4096x4096 a4" "$A 512 3840x4096 p"; do
  set -f; set -- $c; set +f
  W4A16_SM90_TRACE_FILE=$L/$4.txt ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o $L/$4.csv
  echo "$4 $(tail -2 $L/$4.csv | cut -d, -f9,11 | tr '\n' ' ') $(wc -l < $L/$4.txt) CTAs"
done

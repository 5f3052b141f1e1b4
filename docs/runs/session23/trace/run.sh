#!/bin/bash
# twenty-third session call 7: per-CTA timeline (session 21's trace.diff + the first full stage, slot 8,
# tile by tile only) of 128x256x64 at M = 1024 on 4096x4096 (one tile a CTA) and 6144x4096 (stream-K)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'
for c in "$A 1024 4096x4096 a4" "$B 1024 4096x4096 b4" "$A 1024 6144x4096 a6" "$B 1024 6144x4096 b6" "$A 512 3840x4096 p"; do
  set -f; set -- $c; set +f
  W4A16_SM90_TRACE_FILE=$L/$4.txt ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o $L/$4.csv
  echo "$4 $(tail -1 $L/$4.csv | cut -d, -f9,11) $(wc -l < $L/$4.txt) CTAs"
done

#!/bin/bash
# twenty-third session call 8: call 7's timeline with the SM clock over unit 0's mainloop (clock64,
# slot 11), 128x256x64 on 4096x4096 M = 1024 / 4096 and 8192x8192 M = 256 (K pair: 128 CTAs) 
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader | tee $L/gpu.txt
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'
for c in "$A 1024 4096x4096 a4" "$B 1024 4096x4096 b4" "$A 256 8192x8192 k8" "$A 4096 4096x4096 a44"; do
  set -f; set -- $c; set +f
  W4A16_SM90_TRACE_FILE=$L/$4.txt ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o $L/$4.csv
  echo "$4 $(tail -2 $L/$4.csv | cut -d, -f9,11 | tr '\n' ' ') $(wc -l < $L/$4.txt) CTAs"
done

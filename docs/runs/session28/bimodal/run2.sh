#!/bin/bash
# twenty-eighth session, on an H100: what makes the fp16 32x4x1024 TMA GEMV on 4096x4096 M = 2 run
# 4.2 us (eight-layer profiles) or 5.0 us (4096x4096 profiled alone): w4a16 tune (profiles in rounds,
# every kernel) in several contexts (second call: the orders of the eight-layer profiles); per context the times of 32x4x1024 (4 stages) and 16x8x1024 (4 stages)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
t() { # label, tune arguments...
  local lab=$1; shift
  timeout 120 ./w4a16 tune --dtype f16 --mode fgs --no-store --cache /tmp/c.json --dump $L/$lab.tsv "$@" > $L/$lab.txt 2>&1
  echo "$lab: $(awk -F'\t' '$1==2 && $2==4096 && $3==4096 && ($7 ~ /n32_m4_k1024_s4_tma|n16_m8_k1024_s4_tma|n16_m8_k2048_s2_tma/) {sub(/.*_fgs_/,"",$7); printf "%s %s  ", $7, $16}' $L/$lab.tsv)"
}
t cmp_both_m12 --compare-heuristic --model llama3-8b,llama3-70b --m 1,2
t both_m12 --model llama3-8b,llama3-70b --m 1,2
t n6144_4096_m12 --n 6144,4096 --k 4096 --m 1,2
t cmp_both_m1to4 --compare-heuristic --model llama3-8b,llama3-70b --m 1,2,3,4
t alone4 --n 4096 --k 4096 --m 2
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $L/gpu.txt

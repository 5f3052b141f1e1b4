#!/bin/bash
# twenty-fifth session call 7: which part of the conversion costs the 128-token tile its tensor pipe.
# Subset builds (128x256x64, 128x128x128 bf16 fgs 1x1x1) of the working tree with scratch switches:
# base (none: HEAD's code), bg (W4A16_SM90_DIAG_BIGGROUP: the scale rows loaded as for groups >=
# tile_k only, 2 loads a k-block instead of 8 for 128x128x128; right for the group 128 used here), ns
# (W4A16_SM90_DIAG_NOSCALE: biased codes, 7 instructions a word, no subtraction, no scale: wrong),
# nc (W4A16_SM90_DIAG_NOCVT: the packed words as they are). One bench process per problem x kernel x
# variant, rotating, three rounds; then ncu cycles (base clocks) of 128x128x128 on 8192x8192 M = 256.
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
P=("128x128x128 256 8192x8192" "128x128x128 256 4096x4096" "128x128x128 256 6144x4096" "128x128x128 512 4096x4096"
   "128x256x64 256 8192x8192" "128x256x64 1024 4096x4096" "128x256x64 1024 6144x4096")
V=(base bg ns nc)
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    for j in 0 1 2 3; do
      v=$(( (j + r + i) % 4 ))
      set -f
      timeout 60 ./b_${V[$v]} --m $2 --nk $3 --kernels "*bf16_u4_fgs_$1_1x1x1*" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
for v in base bg ns nc; do
  timeout 120 ncu --target-processes all --kernel-name regex:w4a16_sm90 --launch-skip 3 --launch-count 1 --section SpeedOfLight \
    ./b_$v --m 256 --nk 8192x8192 --kernels "*bf16_u4_fgs_128x128x128_1x1x1*" --no-cublas -q > $L/ncu_$v.txt 2>&1
  echo "ncu $v: $(grep -E 'Elapsed Cycles|SM Frequency' $L/ncu_$v.txt | tr -s ' ' | tr '\n' ' ')"
done

#!/bin/bash
# twenty-fourth session call 2: the K pair's first half into rank 0's epilogue buffer in fragment
# order (contiguous, as the ring's): A = added into rank 0's accumulators before the epilogue (correct;
# ptxas spills 184 bytes in 128x256x64), B = read by the epilogue in place while it stages over it
# (diagnostic: wrong sums, the timing of a race-free form) against HEAD (0); leads 0, 4, 8; one
# process per problem and variant, rotating, three rounds (v0 HEAD, v1-3 A at 0/4/8, v4-6 B at 0/4/8)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$A 256 8192x8192" "$D 256 4096x4096" "$A 256 8192x28672" "$D 128 8192x8192")
BINS=(0 A A A B B B); LEADS=(0 0 4 8 0 4 8)
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2 3 4 5 6; do
      v=$(( (j + r + i) % 7 ))
      set -f; W4A16_SM90_KPAIR_LEAD=${LEADS[$v]} timeout 60 ./bench_${BINS[$v]} --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

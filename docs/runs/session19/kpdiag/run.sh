#!/bin/bash
# nineteenth session call 13 (diagnostic): what the K pair's handoff costs. b0 = HEAD's code (subset
# build), b1 = the same with KPDIAG=1 (rank 1 hands nothing over, rank 0 neither waits nor adds:
# wrong results, time only; the diff is kpdiag.diff), b0 with W4A16_SM90_KPAIR=0 (split-K 2)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
V=("./b0" "./b1" "env W4A16_SM90_KPAIR=0 ./b0")
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$A 256 8192x8192" "$A 256 8192x28672" "$A 256 6144x4096" "$A 1024 4096x4096" "$B 128 8192x8192" "$B 256 4096x4096")
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in "${!V[@]}"; do
      v=$(( (j + r + i) % ${#V[@]} ))
      ${V[$v]} --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

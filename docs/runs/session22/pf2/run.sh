#!/bin/bash
# twenty-second session call 16: W4A16_SM90_PREFETCH=-3 (v1) against the 16-token tiles' default -4
# (v0) over the layers, default build with the shrinking parts; five rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
E='*bf16_u4_fgs_128x16x256*'; F='*bf16_u4_fgs_128x16x128*'; G='*bf16_u4_fgs_256x16x128*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$E 8 10240x8192" "$E 16 8192x8192" "$E 1 8192x8192" "$E 16 57344x8192"
   "$E 16 8192x28672" "$E 16 4096x14336" "$E 16 28672x4096" "$E 16 6144x4096" "$F 16 28672x4096" "$F 16 4096x4096"
   "$G 16 57344x8192" "$E 4 57344x8192")
V=(-4 -3)
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      W4A16_SM90_PREFETCH=${V[$v]} ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 300 ] && break
done
head -1 /tmp/o.csv > $L/header.csv

#!/bin/bash
# twenty-fourth session call 13: the prefetch depth before griddepcontrol.wait for the 32-token tiles
# (W4A16_SM90_PREFETCH: default k-blocks / 8, -4, -3 as the <= 16-token tiles have), 128x32x256 and
# 256x32x128 (four consumer warpgroups) at M = 24 / 32 on the eight layers, default build of e552422,
# one process per problem, kernel and variant, rotating, three rounds (v0 default, v1 -4, v2 -3)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
G='*bf16_u4_fgs_128x32x256_1x1x1*'; W='*bf16_u4_fgs_256x32x128_1x1x1_cooperative_wg4'
LAY=(6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672)
PF=("" -4 -3)
for r in 1 2 3; do
  for K in "$G" "$W"; do
    for m in 32 24; do
      for i in "${!LAY[@]}"; do
        for j in 0 1 2; do
          v=$(( (j + r + i) % 3 ))
          set -f
          if [ $v = 0 ]; then timeout 60 ./w4a16_bench --m $m --nk ${LAY[$i]} --kernels "$K" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
          else W4A16_SM90_PREFETCH=${PF[$v]} timeout 60 ./w4a16_bench --m $m --nk ${LAY[$i]} --kernels "$K" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; fi
          set +f
          tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
        done
      done
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 400 ] && break
done
head -1 /tmp/o.csv > $L/header.csv

#!/bin/bash
# twenty-fourth session call 12: how many stages' weights the producer loads before
# griddepcontrol.wait on the tiles of > 16 tokens with short units (W4A16_SM90_PREFETCH: default
# k-blocks / 8, at least 2; -4: k-blocks / 4; 8: every stage), default build of e552422, one process
# per problem and variant, rotating, three rounds (v0 default, v1 -4, v2 8)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
D='*bf16_u4_fgs_128x128x128_1x1x1*'; F='*bf16_u4_fgs_128x64x256_1x1x1*'; G='*bf16_u4_fgs_128x32x256_1x1x1*'
P=("$D 256 6144x4096" "$D 256 4096x4096" "$D 384 4096x4096" "$D 128 6144x4096" "$D 128 8192x8192" "$F 64 10240x8192" "$F 64 28672x4096" "$G 32 10240x8192")
PF=("" -4 8)
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2; do
      v=$(( (j + r + i) % 3 ))
      set -f
      if [ $v = 0 ]; then timeout 60 ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      else W4A16_SM90_PREFETCH=${PF[$v]} timeout 60 ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; fi
      set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

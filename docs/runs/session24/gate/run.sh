#!/bin/bash
# twenty-fourth session call 6: the producer's first activation copies gated on stage 0
# (W4A16_SM90_GATE = 1, 2: issue that many stages' activations after griddepcontrol.wait, wait for
# stage 0 full, then the rest; 0 = HEAD) on the M >= 256 tiles; subset builds, one process per problem
# and variant, rotating, three rounds (v0 = gate 0, v1 = 1, v2 = 2)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$A 1024 4096x4096" "$B 1024 6144x4096" "$A 1024 8192x8192" "$A 256 8192x8192" "$B 256 10240x8192" "$D 256 6144x4096" "$D 256 4096x4096" "$A 1024 10240x8192")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2; do
      v=$(( (j + r + i) % 3 ))
      set -f; timeout 60 ./bench_g$v --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

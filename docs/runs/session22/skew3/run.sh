#!/bin/bash
# twenty-second session call 20: the shrinking parts on the other 16-token tiles of the default build
# (128x16x128, two CTAs an SM; 256x16x128; f16 and zero-point 128x16x256): W4A16_SM90_SKEW=0 (v0)
# against the default (v1); five rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
F='*sm90_bf16_u4_fgs_128x16x128*'; G='*sm90_bf16_u4_fgs_256x16x128*'; H='*sm90_f16_u4_fgs_128x16x256*'; Z='*sm90_bf16_u4_fgsz_128x16x256*'
P=("$F 16 10240x8192" "$F 16 28672x4096" "$F 8 57344x8192" "$G 16 10240x8192" "$G 16 57344x8192" "$H 16 10240x8192" "$Z 16 10240x8192" "$F 16 4096x14336")
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      W4A16_SM90_SKEW=$v ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

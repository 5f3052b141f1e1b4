#!/bin/bash
# nineteenth session call 3: data-parallel tiles first by default (W4A16_SM90_SK_DP = 1): the GPU tests
# of the default build, then v0 / v1 at M = 64 / 128 on the layers of more than a wave of tiles
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
for t in test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"; done
A='*bf16_u4_fgs_128x64x256*'; B='*bf16_u4_fgs_256x64x128_1x1x1*'; C='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$A 64 57344x8192" "$A 64 28672x4096" "$B 64 57344x8192" "$B 64 28672x4096"
   "$A 128 57344x8192" "$A 128 28672x4096" "$A 128 10240x8192" "$B 128 57344x8192" "$B 128 28672x4096"
   "$C 128 57344x8192" "$C 128 28672x4096")
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      W4A16_SM90_SK_DP=$v ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 480 ] && break
done
head -1 /tmp/o.csv > $L/header.csv

#!/bin/bash
# twenty-second session call 10: stream-K parts that shrink with the CTA index (scratch
# W4A16_SCRATCH_SKB = B: the first rem + B parts one k-block longer, the last B one shorter; v = B)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
W4A16_SCRATCH_SKB=7 timeout 150 ./test_gpu_gemv > $L/tg7.txt 2>&1; echo "tg B=7 rc $?" | tee -a $L/tg7.txt; tail -3 $L/tg7.txt
SECONDS=0
E='*128x16x256*'; G='*128x64x256*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$G 64 10240x8192" "$E 16 57344x8192" "$E 16 4096x14336" "$E 16 28672x4096")
V=(0 12 24 36)
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2 3; do
      v=${V[$(( (j + r + i) % 4 ))]}
      W4A16_SCRATCH_SKB=$v ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 300 ] && break
done
head -1 /tmp/o.csv > $L/header.csv

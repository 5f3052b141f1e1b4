#!/bin/bash
# twenty-sixth session calls 6-7: the TMA GEMV's "beside" rule (gemv_tma.cuh: the next kernel's CTAs
# let in beside this grid's wherever the grid is at most one CTA per SM) against W4A16_GEMV_TMA_BESIDE=0
# (only where every CTA's unit fits the stages issued before griddepcontrol.wait; call 7: and a grid of one
# CTA per SM then asks for more than half the shared memory, so that no CTA fits beside): every bf16 scale-only
# TMA GEMV kernel, eight layers x M = 1, 8, 9, 16; one process per problem and variant, rotating, two rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
LAYERS="4096x4096 4096x14336 6144x4096 8192x8192 10240x8192 28672x4096 57344x8192 8192x28672"
for r in 1 2; do
  i=0
  for nk in $LAYERS; do
    for m in 1 8 9 16; do
      for j in 0 1; do
        v=$(( (j + r + i) % 2 ))
        if [ $v = 1 ]; then export W4A16_GEMV_TMA_BESIDE=0; else unset W4A16_GEMV_TMA_BESIDE; fi
        set -f; timeout 60 ./w4a16_bench --m $m --nk $nk --kernels '*gemv_bf16_u4_fgs_*_tma' --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
        tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
      done
      i=$((i+1))
    done
  done
  echo "round $r ${SECONDS}s"
done
unset W4A16_GEMV_TMA_BESIDE
head -1 /tmp/o.csv > $L/header.csv

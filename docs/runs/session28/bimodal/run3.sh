#!/bin/bash
# twenty-eighth session, call 12 (H100): alloc_probe.c (built here: gcc -std=c11 -O2 -Iinclude -Ibuild-pv
# alloc_probe.c build-pv/libw4a16.a -lcudart_static ...): the fp16 32x4x1024 / 16x8x1024 TMA GEMVs on
# 4096x4096 M = 2 (w4a16_profile, every kernel in rounds) after several allocation histories, in one process
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
timeout 200 ./alloc_probe 2>&1 | tee $L/alloc_probe.txt

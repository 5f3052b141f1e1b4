#!/bin/bash
# twenty-ninth session, call 12: the padded grid's size (W4A16_GEMV_TMA_PADTO, scratch: padto_call12.diff on
# ac46d90): 132 (every CTA of the next launch beside from the start) .. 264 (none before the previous grid
# completes), place_probe, two processes each
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
for p in 1 2; do for n in 264 132 165 198 231 248; do
  echo "== PADTO=$n ($p)"; W4A16_GEMV_TMA_PADTO=$n timeout 60 ./place_padto 1 24 240 1 2>&1 | tail -1
done; done | tee $L/padto.txt

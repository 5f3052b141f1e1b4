#!/bin/bash
# twenty-eighth session, call 13 (H100): alloc_probe2.c (built as alloc_probe.c): which earlier problem,
# profiled first in the same process, flips the fp16 32x4x1024 TMA GEMV on 4096x4096 M = 2 to 4.1 us;
# prepared in the twenty-eighth session, not run (no device time left): build alloc_probe2 as alloc_probe
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
for args in "" "1 6144 4096" "2 6144 4096" "4 6144 4096" "8 6144 4096" "9 6144 4096" "16 6144 4096" "16 4096 4096" "2 28672 4096" "16 28672 4096" "64 4096 4096"; do
  timeout 30 ./alloc_probe2 $args 2>&1 | tee -a $L/probe2.txt
done
# the launch rule before the twenty-sixth session (the next kernel's CTAs let in beside a grid of one CTA
# per SM): if 32x4x1024 runs 4.1 us with it from the start, the fast state is that co-residence
for args in "" "16 6144 4096"; do
  W4A16_GEMV_TMA_BESIDE=1 timeout 30 ./alloc_probe2 $args 2>&1 | sed 's/^/BESIDE=1 /' | tee -a $L/probe2.txt
done

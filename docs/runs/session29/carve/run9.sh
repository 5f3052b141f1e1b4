#!/bin/bash
# twenty-ninth session, call 9: the working tree's build (whole carveout, padded grids): the 4-token GEMV's
# states in fresh processes and after other kernels (carveout_probe, alloc_probe2 as in call 1)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
for s in bb bb bb bb bLbSbMb bPbSb; do echo "== $s"; timeout 120 ./carveout_probe $s 2>&1; done | tee $L/carveout.txt
for args in "" "16 6144 4096" "1 6144 4096"; do timeout 30 ./alloc_probe2 $args 2>&1; done | tee $L/probe2.txt

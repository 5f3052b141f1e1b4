#!/bin/bash
# prepared in the twenty-ninth session for the next (not run: no device time left): rounds_probe built
# against a2e76e3's library (subset: the 32 fp16 scale-only kernels, W4A16_KERNELS from
# `python3 -m generator list | grep _f16_u4_fgs_`) as rounds_head and against the current one as
# rounds_new, xz'd into .carry/a; on an H200 first (the fast state showed in every H200 profile), then
# an H100. Build: see ../README.md (probes); a2e76e3 by `git worktree add /tmp/wt_head a2e76e3` and
# cmake -DW4A16_KERNELS=... in another build directory.
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
for m in 2 1; do for b in rounds_head rounds_new; do echo "== $b M=$m"; timeout 120 ./$b $m 2>&1; done; done | tee $L/rounds.txt

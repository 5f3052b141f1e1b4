#!/bin/bash
# prepared in the thirtieth session for the next (not run: no device time left): does an eager caller lose
# much by taking the graph-ranked pick? Per problem (eight layers x M = 1, 2, 4, 8, 16, bf16 scale-only) one
# w4a16_bench process with every GEMV and sm90 kernel, eager (--eager) and as graph replays, CSV. Compare,
# per problem, the eager time of the graph-best kernel with the eager-best kernel's (eager_rank.py). If the
# loss is large on many problems, an eager mode of the profiler (w4a16_profile_options, the config cache
# entry recording how it was timed) would pay; if not, the graph ranking serves both.
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for nk in 6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672; do
  for mode in graph eager; do
    flag=""; [ $mode = eager ] && flag="--eager"
    set -f
    timeout 120 ./w4a16_bench --m 1,2,4,8,16 --nk $nk --kernels '*gemv_bf16_u4_fgs_*,*sm90_bf16_u4_fgs_*' $flag \
      --no-cublas --csv -q -o $L/${mode}_$nk.csv
    set +f
  done
  echo "$nk ${SECONDS}s"
done

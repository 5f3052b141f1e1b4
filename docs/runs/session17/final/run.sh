#!/bin/bash
# seventeenth session call 11: the heuristic's first pick against the profiled best on this session's
# default build (the TMA GEMV next-CTA rule, uncommitted on 1f2729c+), eight layers x M = 1..128, bf16 group 128 (dump for --replay)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/tool && xz -dkf w4a16.xz && chmod +x w4a16
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
timeout 330 ./w4a16 tune --compare-heuristic --m 1,2,4,8,16,32,64,128 --model llama3-8b,llama3-70b --no-store --dump $L/heur.tsv > $L/heur.md 2>&1; echo "tune rc $? ${SECONDS}s"
tail -5 $L/heur.md
xz -dkf bench.xz && chmod +x bench
timeout 200 ./bench --m 1,2,4,8,16 --kernels 'w4a16_gemv_*,w4a16_sm90_*' --iterations 20 --csv -q -o $L/bench_r1.csv
echo "bench done ${SECONDS}s"

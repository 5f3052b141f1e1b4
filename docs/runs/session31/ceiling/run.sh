#!/bin/bash
# thirty-first session, call 3: what is left of issue 4's 4096x4096 M = 1 bar and issue 3's M = 256 /
# 1024 bars, measured side by side on today's build (2a53a94's default build):
# - tools/pdl_stream_probe: back-to-back kernels that only stream each layer's bytes (no math);
# - session29's chain_probe on 4096x4096 (streams before the wait, S cycles a stage after it);
# - w4a16_bench --rounds: 4096x4096 at M = 1, 2 (every bf16 / fp16 fgs GEMV and cuBLASLt);
#   the four M = 256 layers and 6144x4096 at M = 1024 (every bf16 fgs sm90 kernel and cuBLASLt)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 120 ./pdl_stream_probe > $L/stream.csv 2>&1; echo "stream rc $? ${SECONDS}s"; head -3 $L/stream.csv
timeout 60 ./chain_probe 4096 4096 128 > $L/chain_128.csv 2>&1; echo "chain rc $? ${SECONDS}s"; cat $L/chain_128.csv
timeout 60 ./chain_probe 4096 4096 264 > $L/chain_264.csv 2>&1; echo "chain264 rc $? ${SECONDS}s"; head -3 $L/chain_264.csv
set -f
for dt in bf16 f16; do for pass in 1 2; do
  timeout 90 ./w4a16_bench --m 1,2 --nk 4096x4096 --dtype $dt --kernels "*gemv_${dt}_u4_fgs_*" --rounds --csv -q -o $L/gemv_${dt}_$pass.csv
  echo "gemv $dt $pass rc $? ${SECONDS}s"; done; done
for pass in 1 2; do
  for nk in 8192x8192 10240x8192 4096x4096 6144x4096; do
    timeout 90 ./w4a16_bench --m 256 --nk $nk --kernels '*sm90_bf16_u4_fgs_*' --rounds --csv -q -o $L/m256_${nk}_$pass.csv
    echo "m256 $nk $pass rc $? ${SECONDS}s"; done
  timeout 90 ./w4a16_bench --m 1024 --nk 6144x4096 --kernels '*sm90_bf16_u4_fgs_*' --rounds --csv -q -o $L/m1024_6144x4096_$pass.csv
  echo "m1024 $pass rc $? ${SECONDS}s"
done
set +f
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $L/gpu.txt

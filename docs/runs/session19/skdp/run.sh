#!/bin/bash
# nineteenth session call 1: stream-K with data-parallel tiles first (W4A16_SM90_SK_DP = 0 / 1 / 2):
# GPU stream-K tests under each mode, then the bench on the layers where M = 256..1024 take stream-K
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
for v in 1 2; do
  W4A16_SM90_SK_DP=$v W4A16_TEST_FILTER='*sm90_bf16*' timeout 120 ./test_gpu_gemv > $L/tg_dp$v.log 2>&1
  echo "test_gpu_gemv dp$v rc $? $(grep -E 'PASSED|FAILED|SKIPPED' $L/tg_dp$v.log | tr '\n' ' ') ${SECONDS}s"
done
NK=6144x4096,10240x8192,28672x4096,57344x8192,8192x8192,4096x4096
KS='*bf16_u4_fgs_128x256x64*,*bf16_u4_fgs_128x128x128_1x1x1*'
timeout 120 ./w4a16_bench --m 256,1024 --nk $NK --kernels "$KS" --iterations 20 --csv -q -o $L/cublas.csv; echo "cublas ${SECONDS}s"
for r in 1 2 3; do
  for v in 0 1 2; do
    W4A16_SM90_SK_DP=$v timeout 100 ./w4a16_bench --m 256,512,1024 --nk $NK --kernels "$KS" --no-cublas --iterations 20 --csv -q -o $L/v${v}_r$r.csv
    echo "bench v$v r$r rc $? ${SECONDS}s"
  done
  [ $SECONDS -gt 480 ] && break
done

#!/bin/bash
# thirtieth session, call 5: issue 4's M <= 16 bars (and issue 3's M <= 16 sm90 ones) on the default build
# at 0827378: per problem (eight layers x M = 1, 2, 4, 8, 16) one w4a16_bench process timing every bf16
# scale-only GEMV and sm90 kernel and cuBLASLt's bf16 algorithms in the same rounds (--rounds), two
# passes (the second in the reverse order); then the GPU tests of the default build
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
LAYERS="6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672"
SECONDS=0
for r in 1 2; do
  P=""; for nk in $LAYERS; do for m in 1 2 4 8 16; do P="$P $m:$nk"; done; done
  [ $r = 2 ] && P=$(echo $P | tr ' ' '\n' | tac | tr '\n' ' ')
  for p in $P; do
    m=${p%%:*}; nk=${p#*:}
    set -f; timeout 60 ./w4a16_bench --m $m --nk $nk --kernels '*gemv_bf16_u4_fgs_*,*sm90_bf16_u4_fgs_*' --rounds --iterations 20 --csv -q -o /tmp/o.csv; rc=$?; set +f
    [ $rc = 0 ] || echo "rc $rc M=$m $nk"
    tail -n +2 /tmp/o.csv | sed "s/^/$r,/" >> $L/all.csv
    [ $SECONDS -gt 420 ] && break
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
timeout 120 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s $(tail -1 $L/test_gpu_gemv.txt)"

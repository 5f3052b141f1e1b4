#!/bin/bash
# thirtieth session, call 2: function attributes set once per context (common/func_attr.cuh) and the
# architecture string formatted only for a message (device.c). hostcost_probe on subset builds (six fp16
# kernels: HEAD db9354d against the working tree, interleaved, twice, M = 1 and 4) and on the working
# tree's default build; test_gpu_gemv (with test_context_reset) and test_gpu_kernels on the default
# build; test_gpu_gemv of a scratch subset build whose context ID is always 1 (as a once-per-process
# flag would be: test_context_reset must fail there); then the decode profiles, HEAD's tool and the new
# one interleaved, while time lasts
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for rep in 1 2; do for mm in 1 4; do for b in hostcost_sub_head hostcost_sub_new; do
  timeout 30 ./$b $mm > $L/${b}_m${mm}_r$rep.txt 2>&1; done; done; done
for mm in 1 4; do timeout 30 ./hostcost_new $mm > $L/hostcost_new_m$mm.txt 2>&1; done
echo "hostcost ${SECONDS}s"; for f in $L/hostcost_sub_*_m1_r2.txt $L/hostcost_sub_*_m4_r2.txt $L/hostcost_new_m1.txt; do echo "== $f"; cat $f; done
timeout 150 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s $(tail -1 $L/test_gpu_gemv.txt)"
timeout 100 ./test_gpu_gemv_stale > $L/test_gpu_gemv_stale.txt 2>&1; echo "test_gpu_gemv_stale rc $? ${SECONDS}s"; grep -E "FAILED|ERROR|PASSED|error" $L/test_gpu_gemv_stale.txt | head
timeout 200 ./test_gpu_kernels > $L/test_gpu_kernels.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s $(tail -1 $L/test_gpu_kernels.txt)"
for c in "bf16 fgs" "f16 fgs"; do set -- $c
  for b in w4a16_head w4a16; do
    [ $SECONDS -gt 480 ] && break
    timeout 90 ./$b tune --compare-heuristic --model llama3-8b,llama3-70b --m 1,2,3,4,5,6,7,8,9,10,12,14,16 \
      --dtype $1 --mode $2 --no-store --cache /tmp/c.json --dump $L/dec_${b}_$1_$2.tsv > $L/dec_${b}_$1_$2.md 2>&1
    echo "$b $1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/dec_${b}_$1_$2.md)"
  done
done

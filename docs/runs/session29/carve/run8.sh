#!/bin/bash
# twenty-ninth session, call 8: the TMA GEMV at the whole shared-memory carveout, grids padded to the same
# number of CTAs on every SM where the next kernel's CTAs come beside (working tree) against HEAD a2e76e3's
# build: GPU tests, place_probe, w4a16 tune --compare-heuristic on the eight layers at M = 1..16 (13 M),
# bf16 / fp16 scale-only, HEAD and new interleaved
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 60 ./place_probe 2 24 240 1 > $L/place.txt 2>&1; echo "place rc $? ${SECONDS}s"; cat $L/place.txt
timeout 150 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s $(tail -1 $L/test_gpu_gemv.txt)"
timeout 200 ./test_gpu_kernels > $L/test_gpu_kernels.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s $(tail -1 $L/test_gpu_kernels.txt)"
for c in "bf16 fgs" "f16 fgs"; do
  set -- $c
  for b in w4a16_head w4a16; do
    timeout 100 ./$b tune --compare-heuristic --model llama3-8b,llama3-70b --m 1,2,3,4,5,6,7,8,9,10,12,14,16 \
      --dtype $1 --mode $2 --no-store --cache /tmp/c.json --dump $L/dec_${b}_$1_$2.tsv > $L/dec_${b}_$1_$2.md 2>&1
    echo "$b $1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/dec_${b}_$1_$2.md)"
  done
done

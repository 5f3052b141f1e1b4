#!/bin/bash
# twenty-eighth session, on an H100: w4a16 info (mem_gbps), test_select / test_gemm_args / test_cli /
# test_cache, then w4a16 tune --compare-heuristic (profiles in rounds) on the eight layers: the
# M = 513..640 row of 8192x8192 (M = 513..704; bf16 / fp16 scale-only, bf16 zero points) and decode
# (bf16 scale-only, M = 1, 2, 4, 8, 16: no H200 row may be picked here)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader | tee $L/gpu.txt
./w4a16 info > $L/info.txt 2>&1; grep GPU: $L/info.txt
for t in test_select test_gemm_args test_cli test_cache; do timeout 60 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E '^\[  (PASSED|FAILED) ' $L/$t.log | tr '\n' ' ')"; done
SECONDS=0
timeout 60 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m 1,2,4,8,16 --dtype bf16 --mode fgs \
  --no-store --cache /tmp/c.json --dump $L/dec_bf16_fgs.tsv > $L/dec_bf16_fgs.md 2>&1
echo "decode rc $? ${SECONDS}s $(grep -E 'within 10%' $L/dec_bf16_fgs.md) h200 rows picked: $(grep -c '| h200-' $L/dec_bf16_fgs.md)"
for c in "bf16 fgs" "f16 fgs" "bf16 fgsz"; do
  set -- $c
  timeout 150 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m 513,544,576,608,640,672,704 --dtype $1 --mode $2 \
    --no-store --cache /tmp/c.json --dump $L/heur_$1_$2.tsv > $L/heur_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_$1_$2.md)"
done

#!/bin/bash
# thirteenth session call 22: HEAD's default build: the heuristic at M = 384..4096 (bf16 group 128), and the GPU tests once more
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/fin; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16 test_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for t in test_select test_gpu_gemv test_gpu_kernels; do timeout 240 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ')"; done
timeout 250 ./w4a16 tune --compare-heuristic --no-store --m 384,512,1024,2048,4096 --model llama3-8b,llama3-70b --dump $L/heur_large.tsv > $L/tune_large.txt 2>&1; echo "tune large rc $? $(tail -2 $L/tune_large.txt | tr '\n' ' ')"

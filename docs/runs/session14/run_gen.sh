#!/bin/bash
# fourteenth session call 6: the heuristic on layers outside the eight it was fitted on (Llama-2-13B, Qwen2.5-7B, Qwen2.5-72B MLP, Llama-3.2-3B), bf16 group 128, M = 1..256
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/gen; xz -dkf w4a16.xz; chmod +x w4a16
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
M=1,4,16,32,64,128,256
i=0
for nk in "15360,27648:5120" "5120:5120,13824" "4608,37888:3584" "3584:3584,18944" "59136:8192" "8192:29568" "5120,16384:3072" "3072:3072,8192"; do
  n=${nk%%:*}; k=${nk##*:}; i=$((i+1))
  timeout 150 ./w4a16 tune --compare-heuristic --no-store --m $M --n $n --k $k --dump $L/gen_$i.tsv > $L/gen_$i.txt 2>&1
  echo "gen $i ($n x $k) rc $? $(tail -1 $L/gen_$i.txt)"
done

#!/bin/bash
# fourteenth session call 7: profiles (w4a16 tune --dump) of 29 layers outside the eight the heuristic was fitted on
# (Llama-3.2-1B/3B, Phi-3-mini, Qwen2.5-7B/14B/32B/72B, Gemma-2-9B, Llama-2-7B/13B, Mixtral), bf16 fgs group 128, M = 1..256,
# and the eight default layers again (held-out check of a refit)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/gen; xz -dkf w4a16.xz; chmod +x w4a16
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
M=1,2,4,8,16,32,64,128,256
for nk in "3072,2048,16384:2048" "5120,3072,16384,9216:3072" "4608,3584,37888,8192,28672:3584" "12288,22016,14336:4096" \
          "15360,5120,27648,7168,55296:5120" "59136,2048,3072:8192" "4096:11008" "5120:13824" "3584:14336" "3584:18944" "5120:27648" "8192:29568"; do
  n=${nk%%:*}; k=${nk##*:}
  timeout 150 ./w4a16 tune --compare-heuristic --no-store --m $M --n $n --k $k --dump $L/g_$k.tsv > $L/g_$k.txt 2>&1
  echo "K $k (N $n) rc $? $(grep 'within 10%' $L/g_$k.txt)"
done
timeout 200 ./w4a16 tune --compare-heuristic --no-store --m $M --model llama3-8b,llama3-70b --dump $L/def.tsv > $L/def.txt 2>&1
echo "default rc $? $(grep 'within 10%' $L/def.txt)"

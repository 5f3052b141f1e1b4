#!/bin/bash
# fourteenth session call 10: the heuristic of 0f5575e (chains of alternates) live on an H100: the 29 other layers (bf16 g128 M = 1..256,
# f16 zero points and bf16 groups of 64 at M = 1..16), the eight default layers (bf16 g128 M = 1..256), and test_select
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/gen3; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16 test_select
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
timeout 60 ./test_select > $L/test_select.log 2>&1; echo "test_select rc $? $(grep -E 'PASSED|FAILED' $L/test_select.log | tr '\n' ' ')"
SH="3072,2048,16384:2048 5120,3072,16384,9216:3072 4608,3584,37888,8192,28672:3584 12288,22016,14336:4096 15360,5120,27648,7168,55296:5120 59136,2048,3072:8192 4096:11008 5120:13824 3584:14336 3584:18944 5120:27648 8192:29568"
for v in "c:bf16:fgs:128:1,2,4,8,16,32,64,128,256" "zp:f16:fgsz:128:1,2,4,8,16" "g64:bf16:fgs:64:1,2,4,8,16"; do
  IFS=: read tag dt mo gr M <<< "$v"
  for nk in $SH; do
    n=${nk%%:*}; k=${nk##*:}
    timeout 120 ./w4a16 tune --compare-heuristic --no-store --dtype $dt --mode $mo --group $gr --m $M --n $n --k $k --dump $L/${tag}_$k.tsv > $L/${tag}_$k.txt 2>&1
    echo "$tag K $k rc $? $(grep 'within 10%' $L/${tag}_$k.txt)"
  done
done
timeout 200 ./w4a16 tune --compare-heuristic --no-store --m 1,2,4,8,16,32,64,128,256 --model llama3-8b,llama3-70b --dump $L/def.tsv > $L/def.txt 2>&1
echo "default rc $? $(grep 'within 10%' $L/def.txt)"

#!/bin/bash
# fourteenth session call 17: HEAD's default build (745c804): GPU tests, the heuristic live (eight layers and the 29 others,
# bf16 g128, M = 1..256)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/final; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16 w4a16_bench test_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for t in test_select test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ')"; done
timeout 100 ./w4a16 tune --compare-heuristic --no-store --m 1,2,4,8,16,32,64,128,256 --model llama3-8b,llama3-70b --dump $L/def.tsv > $L/def.txt 2>&1
echo "default rc $? $(grep 'within 10%' $L/def.txt)"
for nk in "3072,2048,16384:2048" "5120,3072,16384,9216:3072" "4608,3584,37888,8192,28672:3584" "12288,22016,14336:4096" "15360,5120,27648,7168,55296:5120" "59136,2048,3072:8192" "4096:11008" "5120:13824" "3584:14336" "3584:18944" "5120:27648" "8192:29568"; do
  n=${nk%%:*}; k=${nk##*:}
  timeout 60 ./w4a16 tune --compare-heuristic --no-store --m 1,2,4,8,16,32,64,128,256 --n $n --k $k --dump $L/c_$k.tsv > $L/c_$k.txt 2>&1
  echo "c K $k rc $? $(grep 'within 10%' $L/c_$k.txt)"
done

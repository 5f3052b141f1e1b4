#!/bin/bash
# twentieth session call 10: the stream-K ring and the rule for W (default build): GPU tests,
# sanitizers on three kSkRing kernels, the heuristic checks, the bench with cuBLAS for the bars
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
for t in test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"; done
for k in w4a16_sm90_f16_u4_fgsz_128x256x64_2x1x1_cooperative w4a16_sm90_bf16_u4_fgs_128x256x64_1x1x1_cooperative w4a16_sm90_bf16_u4_pc_128x256x64_2x1x1_cooperative; do
  for tool in racecheck synccheck memcheck; do
    W4A16_TEST_FILTER=$k timeout 100 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/${tool}_$k.log 2>&1; echo "$tool $k rc $? $(tail -1 $L/${tool}_$k.log) $(grep -c 'OK \]' $L/${tool}_$k.log) ok ${SECONDS}s"
  done
done
H="./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --no-store"
timeout 120 $H --m 1,2,4,8,16,32,64,128 --dump $L/heur.tsv > $L/heur.txt 2>&1; echo "heur $(grep 'within 10%' $L/heur.txt) ${SECONDS}s"
timeout 120 $H --m 256,512,1024 --dump $L/heur_big.tsv > $L/heur_big.txt 2>&1; echo "heur_big $(grep 'within 10%' $L/heur_big.txt) ${SECONDS}s"
for r in 1 2; do
  timeout 150 ./w4a16_bench --m 1,16,64,256,1024 --iterations 20 --top 3 --csv -q -o $L/bench_r$r.csv; echo "bench r$r rc $? ${SECONDS}s"
done

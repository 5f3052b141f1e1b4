#!/bin/bash
# twenty-sixth session call 8: the TMA GEMV without the next kernel's CTA beside a grid of one CTA per
# SM whose units do not fit the stages (gemv_tma.cuh), default build: test_gpu_kernels, test_gpu_gemv;
# compute-sanitizer memcheck and racecheck through test_gpu_gemv on the kernel it sped up most
# (bf16 scale-only 32x16x1024, 3 stages); the heuristic against fresh profiles in rounds: bf16
# scale-only M = 1, 2, 4, ..., 4096, zero points (bf16, f16) at M = 2..16
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 150 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s"; tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt; grep -E "PASSED|FAILED" $L/tk_summary.txt | tail -3
timeout 200 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s"; tr '\r' '\n' < $L/tg.txt | grep -v "^case" > $L/tg_summary.txt; rm -f $L/tg.txt; grep -E "PASSED|FAILED" $L/tg_summary.txt | tail -3
k=w4a16_gemv_bf16_u4_fgs_n32_m16_k1024_s3_tma
for tool in memcheck racecheck; do
  W4A16_TEST_FILTER=$k timeout 120 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/${tool}_gemv.log 2>&1
  echo "$tool rc $? $(grep -E 'SUMMARY' $L/${tool}_gemv.log | tail -1) $(grep -E 'PASSED|FAILED' $L/${tool}_gemv.log | tr '\n' ' ') ${SECONDS}s"
done
timeout 170 ./w4a16 tune --compare-heuristic --dtype bf16 --mode fgs --group 128 --no-store --seed 15 --dump $L/heur_bf16_fgs.tsv > $L/heur_bf16_fgs.md 2>&1
echo "heuristic bf16 fgs rc $? $(grep 'within 10%' $L/heur_bf16_fgs.md) ${SECONDS}s"
for dt in bf16 f16; do
  timeout 120 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --dtype $dt --mode fgsz --group 128 --no-store --seed 15 --dump $L/dump_${dt}_fgsz_small.tsv > $L/heur_${dt}_fgsz_small.md 2>&1
  echo "zp small $dt rc $? $(grep 'within 10%' $L/heur_${dt}_fgsz_small.md) ${SECONDS}s"
done

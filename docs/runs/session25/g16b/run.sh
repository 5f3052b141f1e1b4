#!/bin/bash
# twenty-fifth session call 11: the default build with n32_m16_k512_s4 (TMA GEMV, scale-only and
# per-column; 188 kernels) and the heuristic's row for it (M = 9..16 on N = 4097..6144, K <= 4096):
# GPU tests; the heuristic's pick against the profiled best on 6144x4096 at M = 9, 12, 16 (bf16 and
# f16 scale-only, bf16 per-column); 6144x4096 M = 1 (n32_m8_k1024_s3) and M = 16 (the new kernel and
# n32_m16_k1024_s2) each in its own process with cuBLAS, three rounds (all.csv)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 200 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s" | tee -a $L/tk.txt
tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt; grep -E "PASSED|FAILED" $L/tk_summary.txt | tail -3
SECONDS=0
timeout 200 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "PASSED|FAIL" $L/tg.txt | tail -3
SECONDS=0
for c in "bf16 fgs" "f16 fgs" "bf16 pc"; do
  set -- $c
  timeout 100 ./w4a16 tune --compare-heuristic --m 9,12,16 --n 6144 --k 4096 --dtype $1 --mode $2 --no-store > $L/heur_$1_$2.md 2>&1
  echo "heuristic $1 $2 rc $?"; grep -E "^\|" $L/heur_$1_$2.md | head -6
done
echo "heuristic ${SECONDS}s"
for r in 1 2 3; do
  for c in "1 w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma" "16 w4a16_gemv_bf16_u4_fgs_n32_m16_k512_s4_tma" "16 w4a16_gemv_bf16_u4_fgs_n32_m16_k1024_s2_tma"; do
    set -- $c
    timeout 60 ./w4a16_bench --m $1 --nk 6144x4096 --kernels $2 --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
done
head -1 /tmp/o.csv > $L/header.csv

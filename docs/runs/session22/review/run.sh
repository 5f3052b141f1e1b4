#!/bin/bash
# twenty-second session call 21 (review): the default build after sk_part_of (the stream-K part inverse beside
# sk_start; no behaviour change): GPU tests, racecheck on 128x16x256, then issue 3's M <= 16 bars on the 70B
# layers and issue 4's 4096x4096 M = 1 (one bench process per problem and kernel with cuBLAS, four rounds)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 200 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s" | tee -a $L/tk.txt; grep -E "PASSED|FAILED" $L/tk.txt | tail -2
SECONDS=0
timeout 200 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "PASSED|FAIL" $L/tg.txt | tail -3
W4A16_TEST_FILTER='*bf16_u4_fgs_128x16x256*' timeout 120 compute-sanitizer --tool racecheck ./test_gpu_gemv > $L/san_racecheck.txt 2>&1
echo "racecheck rc $?" | tee -a $L/san_racecheck.txt; tail -2 $L/san_racecheck.txt
tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt
SECONDS=0
B='*sm90_bf16_u4_fgs_128x16x256_1x1x1*'; G='*gemv_bf16_u4_fgs_n16_m4_k2048_s3_tma*'
P=("$B 16 8192x8192" "$B 16 10240x8192" "$B 16 57344x8192" "$B 16 8192x28672" "$B 1 10240x8192" "$B 8 10240x8192" "$G 1 4096x4096")
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$(( (i + 3 * r) % ${#P[@]} ))]}; set +f
    ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

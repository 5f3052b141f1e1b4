#!/bin/bash
# twenty-fifth session call 8: bf16 dequantization in fp32 (W4A16_SM90_CVT32=1, b_c32: 128 + q exact, FFMA
# by s against -136 s (exact), packed by cvt.rn.bf16x2.f32) against HEAD (b_10); ncu cycles
# Subset builds (128x256x64, 128x128x128 bf16 fgs 1x1x1); one bench process per problem x
# kernel x variant, rotating, four rounds.
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 120 ./tk_c32 > $L/tk.txt 2>&1; echo "test_gpu_kernels (cvt32) rc $? ${SECONDS}s"; tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt; grep -E "PASSED|FAILED" $L/tk_summary.txt | tail -3
SECONDS=0
P=("128x128x128 256 8192x8192" "128x128x128 256 4096x4096" "128x128x128 256 6144x4096" "128x128x128 512 4096x4096"
   "128x256x64 256 8192x8192" "128x256x64 1024 4096x4096" "128x256x64 1024 6144x4096")
V=(10 c32)
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      set -f
      timeout 60 ./b_${V[$v]} --m $2 --nk $3 --kernels "*bf16_u4_fgs_$1_1x1x1*" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
for v in 10 c32; do
  timeout 120 ncu --target-processes all --kernel-name regex:w4a16_sm90 --launch-skip 3 --launch-count 1 --section SpeedOfLight \
    ./b_$v --m 256 --nk 8192x8192 --kernels "*bf16_u4_fgs_128x128x128_1x1x1*" --no-cublas -q > $L/ncu_$v.txt 2>&1
  echo "ncu $v: $(grep -E 'Elapsed Cycles|SM Frequency' $L/ncu_$v.txt | tr -s ' ' | tr '\n' ' ')"
done

#!/bin/bash
# twenty-first session call 2: stream-K parts with the inner ones shortened (W4A16_SM90_SK_SHORT = 1, 2)
# against equal parts (0); one binary, one bench process per problem and variant, rotating; the
# subset's GPU tests under each
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
for v in 2 1; do W4A16_SM90_SK_SHORT=$v timeout 120 ./t1 > $L/t1_$v.txt 2>&1; echo "t1 short $v rc $?" | tee -a $L/t1_$v.txt; tail -2 $L/t1_$v.txt; done
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; D='*bf16_u4_fgs_128x256x64_2x1x1*'; C='*bf16_u4_fgs_128x64x256_1x1x1*'
E='*bf16_u4_fgs_128x16x256_1x1x1*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$E 8 10240x8192" "$C 64 10240x8192" "$C 64 28672x4096" "$A 256 10240x8192"
   "$D 256 10240x8192" "$A 256 57344x8192" "$D 1024 6144x4096" "$A 1024 6144x4096" "$E 16 57344x8192" "$C 32 6144x4096")
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2; do
      v=$(( (j + r + i) % 3 ))
      W4A16_SM90_SK_SHORT=$v ./b --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 420 ] && break
done
head -1 /tmp/o.csv > $L/header.csv

#!/bin/bash
# twentieth session call 5: a stream-K owner's last partial (its producer waits for its flag) into its stage ring by bulk copies
# (W4A16_SM90_SK_RING build 1 = b1) against the global reads (0 = b0); GPU tests and
# compute-sanitizer on b1's kernels first; one bench process per problem and variant, rotating
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
for t in test_gpu_kernels test_gpu_gemv; do timeout 300 ./$t > $L/$t.log 2>&1; echo "$t rc=$? $(grep -c 'OK \]' $L/$t.log) ok"; done
for k in w4a16_sm90_bf16_u4_fgs_128x256x64_1x1x1_cooperative w4a16_sm90_bf16_u4_fgs_128x128x128_1x1x1_cooperative w4a16_sm90_bf16_u4_fgs_128x64x256_1x1x1_cooperative; do
  for tool in racecheck synccheck memcheck; do
    W4A16_TEST_FILTER=$k timeout 200 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/${tool}_$k.log 2>&1
    echo "$tool $k rc=$? $(grep -c 'OK \]' $L/${tool}_$k.log) ok: $(grep 'SUMMARY' $L/${tool}_$k.log)"
  done
done
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x128x128_1x1x1*'; C='*bf16_u4_fgs_128x64x256_1x1x1*'
D='*bf16_u4_fgs_128x256x64_2x1x1*'
P=("$A 1024 6144x4096" "$D 1024 6144x4096" "$A 1024 10240x8192" "$A 256 57344x8192" "$A 256 28672x4096"
   "$A 512 28672x4096" "$B 512 6144x4096" "$B 512 10240x8192" "$C 64 28672x4096" "$C 64 57344x8192"
   "$A 256 10240x8192" "$C 64 10240x8192" "$B 256 6144x4096" "$D 256 10240x8192" "$B 256 10240x8192")
for r in 1 2 3 4 5 6; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      ./b$v --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 400 ] && break
done
head -1 /tmp/o.csv > $L/header.csv

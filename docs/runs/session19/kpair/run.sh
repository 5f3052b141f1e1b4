#!/bin/bash
# nineteenth session call 10: the K pair in place of split-K into two slices, for the large tiles
# through the whole stage ring: GPU tests, sanitizers, A/B (W4A16_SM90_KPAIR=0: split-K 2 as before)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
for t in test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"; done
for k in w4a16_sm90_bf16_u4_fgs_128x256x64_1x1x1_cooperative w4a16_sm90_f16_u4_fgsz_256x64x128_1x1x1_cooperative; do
  for tool in racecheck synccheck memcheck; do
    W4A16_TEST_FILTER=$k timeout 100 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/${tool}_$k.log 2>&1; echo "$tool $k rc $? $(tail -1 $L/${tool}_$k.log) ${SECONDS}s"
  done
done
V=("W4A16_SM90_KPAIR=0" "X=1")
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x128x128_1x1x1*'; C='*bf16_u4_fgs_256x64x128_1x1x1*'; D='*bf16_u4_fgs_256x16x128_1x1x1*'
P=("$A 256 8192x8192" "$A 256 8192x28672" "$A 256 6144x4096" "$A 128 8192x8192" "$A 512 4096x4096" "$A 512 4096x14336"
   "$B 256 4096x4096" "$B 256 4096x14336" "$B 128 8192x8192" "$B 128 6144x4096" "$B 64 8192x28672"
   "$C 128 8192x8192" "$C 256 4096x4096" "$C 128 8192x28672" "$D 32 8192x8192" "$D 17 6144x4096" "$D 64 4096x4096")
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in "${!V[@]}"; do
      v=$(( (j + r + i) % ${#V[@]} ))
      env ${V[$v]} ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 480 ] && break
done
head -1 /tmp/o.csv > $L/header.csv

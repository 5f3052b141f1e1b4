#!/bin/bash
# nineteenth session call 15: the ring K pair's handoff chunk by chunk (rank 0 signals each stage as it
# frees, rank 1 sends that chunk at once) in place of one handoff after the whole ring: GPU tests of the default
# build, sanitizers, A/B against HEAD bc2ddf7 (b0: subset build of 128x256x64 / 128x128x128; b2: the same
# kernels chunk by chunk)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
for t in test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"; done
for k in w4a16_sm90_bf16_u4_fgs_128x256x64_1x1x1_cooperative w4a16_sm90_f16_u4_fgsz_128x64x128_1x1x1_cooperative; do
  for tool in racecheck synccheck memcheck; do
    W4A16_TEST_FILTER=$k timeout 100 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/${tool}_$k.log 2>&1; echo "$tool $k rc $? $(tail -1 $L/${tool}_$k.log) $(grep -c 'OK \]' $L/${tool}_$k.log) ok ${SECONDS}s"
  done
done
V=("./b0" "./b2")
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$A 256 8192x8192" "$A 256 8192x28672" "$A 256 6144x4096" "$A 128 8192x8192" "$A 512 4096x4096" "$A 512 4096x14336"
   "$B 256 4096x4096" "$B 256 4096x14336" "$B 128 8192x8192" "$B 128 6144x4096" "$B 64 8192x28672" "$A 1024 4096x4096")
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in "${!V[@]}"; do
      v=$(( (j + r + i) % ${#V[@]} ))
      ${V[$v]} --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

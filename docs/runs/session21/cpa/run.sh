#!/bin/bash
# twenty-first session call 3: a stream-K owner's partials all at once into its stage ring by cp.async
# (b1, W4A16_SM90_FIXUP_CPASYNC=1) against the reads from global one (two) at a time (b0); subset
# build of five bf16 fgs tiles; GPU tests and compute-sanitizer on the cp.async path first
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for t in t2 t1; do timeout 150 ./$t > $L/$t.log 2>&1; rc=$?; echo "$t rc $rc $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"; [ $rc = 124 ] && exit 1; done
for k in w4a16_sm90_bf16_u4_fgs_128x16x256_1x1x1_cooperative w4a16_sm90_bf16_u4_fgs_128x64x256_1x1x1_cooperative; do
  for tool in racecheck synccheck memcheck; do
    W4A16_TEST_FILTER=$k timeout 100 compute-sanitizer --tool $tool ./t2 > $L/${tool}_$k.log 2>&1; echo "$tool $k rc $? $(tail -1 $L/${tool}_$k.log) $(grep -c 'OK \]' $L/${tool}_$k.log) ok ${SECONDS}s"
  done
done
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x128x128_1x1x1*'; C='*bf16_u4_fgs_128x64x256_1x1x1*'
E='*bf16_u4_fgs_128x16x256_1x1x1*'; F='*bf16_u4_fgs_128x32x256_1x1x1*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$E 16 4096x14336" "$E 16 57344x8192" "$C 64 10240x8192" "$C 64 28672x4096"
   "$C 64 57344x8192" "$F 32 10240x8192" "$B 256 6144x4096" "$B 128 10240x8192" "$A 256 10240x8192")
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      ./b$v --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 480 ] && break
done
head -1 /tmp/o.csv > $L/header.csv

#!/bin/bash
# twenty-third session call 2: the K-split 64x16x256 with 12 stages (96 KB of weights in flight)
# against 128x16x256, three rounds; the racecheck hazards' SASS (call 1)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
cuobjdump --dump-sass --function '_ZN10w4a16_sm9017w4a16_sm90_kernelI13__nv_bfloat16NS_3CfgILi1ELi64ELi16ELi256ELi1ELi1ELi1ELi12ELi2EEELb0EEEv14CUtensorMap_stS4_S4_S4_S4_S4_S4_NS_6ParamsE' ./w4a16_bench > $L/ks.sass 2>&1
W4A16_TEST_FILTER='*bf16_u4_fgs_64x16x256*' timeout 120 compute-sanitizer --tool racecheck --racecheck-report all ./test_gpu_gemv > $L/san_racecheck.txt 2>&1
echo "racecheck rc $?" | tee -a $L/san_racecheck.txt; grep -m3 'Race reported' -A1 $L/san_racecheck.txt; tail -2 $L/san_racecheck.txt
SECONDS=0
A='*bf16_u4_fgs_128x16x256_1*'; B='*bf16_u4_fgs_64x16x256_1*'
P=("16 10240x8192" "1 10240x8192" "16 8192x8192" "16 57344x8192" "16 28672x4096")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    for j in 0 1; do
      v=$(( (j + r + i) % 2 )); KK=$A; [ $v = 1 ] && KK=$B
      set -f; timeout 60 ./w4a16_bench --m $1 --nk $2 --kernels "$KK" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

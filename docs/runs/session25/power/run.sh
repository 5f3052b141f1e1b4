#!/bin/bash
# twenty-fifth session call 5: is the conversion's cost at M = 256 the clock (power) or the pipeline?
# (1) sustained 8192x8192 M = 256, 1000 graph replays a process, nvidia-smi every 50 ms: 128x256x64
# (K pair) and 128x128x128 as built (sub), the same without conversion (nc: session23/power/
# diag_nocvt.diff, wrong results), cuBLAS bf16; (2) ncu at base clocks on 128x256x64 4096x4096
# M = 1024 and 128x128x128 8192x8192 M = 256, as built and without conversion: cycles
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,power.draw,power.limit --format=csv,noheader | tee $L/gpu.txt
for c in "sub 128x256x64" "nc 128x256x64" "cublas x" "sub 128x128x128" "nc 128x128x128"; do
  set -- $c
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 50 > $L/smi_$1_$2.csv &
  S=$!; sleep 1
  if [ $1 = cublas ]; then
    ./bench_sub --m 256 --nk 8192x8192 --kernels 'none_matches' --cublas-algos 1 --warmup 20 --iterations 1000 --csv -q -o $L/$1_$2.csv
  else
    ./bench_$1 --m 256 --nk 8192x8192 --kernels "*bf16_u4_fgs_$2_1x1x1*" --no-cublas --warmup 20 --iterations 1000 --csv -q -o $L/$1_$2.csv
  fi
  sleep 1; kill $S; sleep 2
  echo "$1 $2 $(tail -1 $L/$1_$2.csv | cut -d, -f9,11-13)"
done
for c in "sub 128x256x64 1024 4096x4096" "nc 128x256x64 1024 4096x4096" "sub 128x128x128 256 8192x8192" "nc 128x128x128 256 8192x8192"; do
  set -- $c
  timeout 120 ncu --target-processes all --kernel-name regex:w4a16_sm90 --launch-skip 3 --launch-count 1 --section SpeedOfLight \
    ./bench_$1 --m $3 --nk $4 --kernels "*bf16_u4_fgs_$2_1x1x1*" --no-cublas -q > $L/ncu_$1_$2.txt 2>&1
  echo "ncu $1 $2: $(grep -E 'Elapsed Cycles|SM Frequency' $L/ncu_$1_$2.txt | tr -s ' ' | tr '\n' ' ')"
done

#!/bin/bash
# twenty-third session call 15: sustained load at M = 4096 (8192x8192): nvidia-smi sampled every 50 ms
# while 128x256x64 2x1x1 (sm90) and cuBLAS bf16 (--cublas-algos 1) each run 400 graph replays in their
# own process: clock and power of each
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
for v in sm90 cublas sm90b; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 50 > $L/smi_$v.csv &
  S=$!; sleep 1
  if [ $v = cublas ]; then
    ./w4a16_bench --m 4096 --nk 8192x8192 --kernels 'none_matches' --cublas-algos 1 --warmup 20 --iterations 400 --csv -q -o $L/$v.csv
  else
    ./w4a16_bench --m 4096 --nk 8192x8192 --kernels '*bf16_u4_fgs_128x256x64_2x1x1*' --no-cublas --warmup 20 --iterations 400 --csv -q -o $L/$v.csv
  fi
  sleep 1; kill $S; sleep 2
  echo "$v $(tail -1 $L/$v.csv | cut -d, -f9,11-13)"
done

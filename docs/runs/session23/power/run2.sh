#!/bin/bash
# twenty-third session call 16: sustained load at M = 4096 (8192x8192), 1000 graph replays a process,
# nvidia-smi every 50 ms (clock, power.draw and power.draw.instant): 128x256x64 2x1x1 as built, the
# same without the weights' conversion and scale (w4a16_bench_nocvt: diag_nocvt.diff, wrong results),
# and cuBLAS bf16
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
for v in sm90 nocvt cublas sm90b nocvtb; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,power.draw.instant,temperature.gpu --format=csv,noheader -lms 50 > $L/smi_$v.csv 2>&1 &
  S=$!; sleep 1
  case $v in
    cublas) ./w4a16_bench --m 4096 --nk 8192x8192 --kernels 'none_matches' --cublas-algos 1 --warmup 20 --iterations 1000 --csv -q -o $L/$v.csv ;;
    nocvt*) ./w4a16_bench_nocvt --m 4096 --nk 8192x8192 --kernels '*128x256x64_2x1x1*' --no-cublas --warmup 20 --iterations 1000 --csv -q -o $L/$v.csv ;;
    *) ./w4a16_bench --m 4096 --nk 8192x8192 --kernels '*bf16_u4_fgs_128x256x64_2x1x1*' --no-cublas --warmup 20 --iterations 1000 --csv -q -o $L/$v.csv ;;
  esac
  sleep 1; kill $S; sleep 3
  echo "$v $(tail -1 $L/$v.csv | cut -d, -f9,11-13)"
done

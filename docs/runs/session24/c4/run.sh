#!/bin/bash
# twenty-fourth session call 5: the activation tile multicast to four CTAs along N (128x256x64 4x1x1,
# a generator cluster shape outside the space: (4, 1)) against 2x1x1 and 1x1x1 at M = 1024 / 4096,
# fewer L2 -> SM bytes for the energy the card's power limit rations: GPU tests of the subset, one
# bench process per problem and kernel with cuBLAS bf16 (pairs.py), then 400 sustained replays of
# 8192x8192 M = 4096 with nvidia-smi every 50 ms
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 120 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s" | tee -a $L/tk.txt
tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt; grep -E "PASSED|FAILED" $L/tk_summary.txt | tail -3
for v in c4 c2 cublas c4b c2b; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,power.draw.instant,temperature.gpu --format=csv,noheader -lms 50 > $L/smi_$v.csv 2>&1 &
  S=$!; sleep 1
  case $v in
    cublas) ./w4a16_bench --m 4096 --nk 8192x8192 --kernels 'none_matches' --cublas-algos 1 --warmup 20 --iterations 400 --csv -q -o $L/$v.csv ;;
    c4*) ./w4a16_bench --m 4096 --nk 8192x8192 --kernels '*128x256x64_4x1x1*' --no-cublas --warmup 20 --iterations 400 --csv -q -o $L/$v.csv ;;
    c2*) ./w4a16_bench --m 4096 --nk 8192x8192 --kernels '*128x256x64_2x1x1*' --no-cublas --warmup 20 --iterations 400 --csv -q -o $L/$v.csv ;;
  esac
  sleep 1; kill $S; sleep 3
  echo "$v $(tail -1 $L/$v.csv | cut -d, -f9,11-13)"
done
SECONDS=0
B='*128x256x64_2x1x1*'; F='*128x256x64_4x1x1*'; A='*128x256x64_1x1x1*'
P=("$F 4096 8192x8192" "$B 4096 8192x8192" "$F 4096 4096x4096" "$B 4096 4096x4096" "$F 4096 6144x4096" "$B 4096 6144x4096"
   "$F 4096 28672x4096" "$B 4096 28672x4096" "$F 1024 6144x4096" "$B 1024 6144x4096" "$F 1024 4096x4096" "$A 1024 4096x4096"
   "$F 1024 8192x8192" "$A 1024 8192x8192" "$F 256 10240x8192" "$B 256 10240x8192")
for r in 1 2; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    timeout 60 ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 250 ] && break
done
head -1 /tmp/o.csv > $L/header.csv

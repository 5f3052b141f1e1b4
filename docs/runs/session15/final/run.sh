#!/bin/bash
# fifteenth session call 6: HEAD's default build (184 kernels): GPU tests and the issue 3 / 4 bar table on this card
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/def; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench test_*
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu,driver_version --format=csv,noheader
for t in test_select test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ')"; done
timeout 300 ./w4a16_bench --m 1,16,64,256,1024,4096 --top 3 --csv -q -o $L/bench.csv; echo "bench rc $?"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader

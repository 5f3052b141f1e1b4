#!/bin/bash
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
mkdir -p $OUT/logs; L=$OUT/logs
fin() { cd $OUT && tar cJf logs.txz logs; }
trap fin EXIT
cd /tmp; xz -dc $R/.carry/q/bench.xz > bench; chmod +x bench
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $L/smi.txt
for r in 1 2; do
 ./bench --m 256,1024 --iterations 20 --csv -q -o $L/va_r$r.csv
 W4A16_SM90_STREAMK=0 ./bench --m 256,1024 --no-cublas --iterations 20 --csv -q -o $L/vb_r$r.csv
 W4A16_SM90_STREAMK=1 ./bench --m 256,1024 --no-cublas --iterations 20 --csv -q -o $L/vc_r$r.csv
done 2>>$L/err.txt

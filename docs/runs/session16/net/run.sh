#!/bin/bash
# sixteenth session call 12: the session's net change: HEAD db4127c's default build (fin) against the
# session's starting commit 46bbf7b (head), bf16 fgs sm90 kernels, eight layers x M = 1..1024, three
# rounds interleaved
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
for d in fin head; do (cd $R/.carry/$d && xz -dkf w4a16_bench.xz && chmod +x w4a16_bench); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
for r in 1 2 3; do
  for v in head fin; do
    timeout 100 $R/.carry/$v/w4a16_bench --m 1,16,32,64,256,1024 --kernels '*sm90_bf16_u4_fgs*' --no-cublas --iterations 20 --csv -q -o $L/${v}_r$r.csv; echo "$v r$r rc $? ${SECONDS}s"
  done
  [ $SECONDS -gt 200 ] && break
done
echo end

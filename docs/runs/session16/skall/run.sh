#!/bin/bash
# sixteenth session call 10: with the flag warp, stream-K wherever a wave is part-empty
# (W4A16_SM90_STREAMK=1) against the runtime's rule (efficiency < 0.85, <= 4 waves) at M = 128..1024,
# the large tiles of the default build (HEAD db4127c), three rounds interleaved
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/fin && xz -dkf w4a16_bench.xz && chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
KS='*sm90_bf16_u4_fgs_128x128x128*,*sm90_bf16_u4_fgs_128x256x64*,*sm90_bf16_u4_fgs_128x64x256*'
for r in 1 2 3; do
  timeout 120 ./w4a16_bench --m 128,256,512,1024 --kernels "$KS" --no-cublas --iterations 20 --csv -q -o $L/rule_r$r.csv; echo "rule r$r rc $? ${SECONDS}s"
  W4A16_SM90_STREAMK=1 timeout 120 ./w4a16_bench --m 128,256,512,1024 --kernels "$KS" --no-cublas --iterations 20 --csv -q -o $L/all_r$r.csv; echo "all r$r rc $? ${SECONDS}s"
  [ $SECONDS -gt 300 ] && break
done
echo end

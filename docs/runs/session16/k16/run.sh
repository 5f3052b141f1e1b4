#!/bin/bash
# sixteenth session call 3: 128x16x256 converting by halves (W4A16_SM90_OVERLAP_K256=0, producer at 48
# registers: no spill) against HEAD 46bbf7b's 128x16x256 (two fragment buffers, 36-byte spill),
# M = 1..16, eight layers, bf16 fgs and f16 fgsz, four rounds interleaved
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
for d in o0 head; do (cd $R/.carry/$d && for f in *.xz; do xz -dkf $f; done; chmod +x *); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
for r in 1 2 3 4; do
  for v in head o0; do
    timeout 60 $R/.carry/$v/w4a16_bench --m 1,4,8,16 --kernels '*bf16_u4_fgs_128x16x256*' --no-cublas --iterations 20 --csv -q -o $L/${v}_r$r.csv; echo "$v r$r rc $? ${SECONDS}s"
    timeout 60 $R/.carry/$v/w4a16_bench --m 1,16 --dtype f16 --mode fgsz --kernels '*f16_u4_fgsz_128x16x256*' --no-cublas --iterations 20 --csv -q -o $L/z${v}_r$r.csv; echo "z$v r$r rc $? ${SECONDS}s"
  done
done

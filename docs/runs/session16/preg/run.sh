#!/bin/bash
# sixteenth session call 2: the producer at 48 registers (40 for 128x16x256), default build, against
# HEAD 46bbf7b's default build: bench A/B (bf16 fgs sm90 kernels, three rounds interleaved, one
# cuBLAS run), then the GPU tests and the sanitizers on a one- and a two-CTA-per-SM tile
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
for d in p48 head; do (cd $R/.carry/$d && for f in *.xz; do xz -dkf $f; done; chmod +x *); done
H=$R/.carry/p48; B=$R/.carry/head
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
KS='*sm90_bf16_u4_fgs*'
M=1,16,32,64,256,1024
SECONDS=0
timeout 150 $H/w4a16_bench --m $M --kernels "$KS" --iterations 20 --csv -q -o $L/cublas.csv; echo "cublas rc $? ${SECONDS}s"
for r in 1 2 3; do
  timeout 100 $B/w4a16_bench --m $M --kernels "$KS" --no-cublas --iterations 20 --csv -q -o $L/head_r$r.csv; echo "head r$r rc $? ${SECONDS}s"
  timeout 100 $H/w4a16_bench --m $M --kernels "$KS" --no-cublas --iterations 20 --csv -q -o $L/p48_r$r.csv; echo "p48 r$r rc $? ${SECONDS}s"
  [ $SECONDS -gt 330 ] && break
done
cd $H
for t in test_select test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"; done
for k in w4a16_sm90_bf16_u4_fgs_128x16x128_1x1x1_cooperative w4a16_sm90_bf16_u4_fgsz_128x64x256_1x1x1_cooperative; do
  for tool in memcheck racecheck synccheck; do
    [ $SECONDS -gt 560 ] && break
    W4A16_TEST_FILTER=$k W4A16_TEST_QUICK=1 timeout 60 compute-sanitizer --tool $tool ./test_gpu_kernels > $L/${tool}_$k.log 2>&1; echo "$tool $k rc $? $(tail -1 $L/${tool}_$k.log) ${SECONDS}s"
  done
done

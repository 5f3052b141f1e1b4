#!/bin/bash
# sixteenth session call 1: stream-K with tile heads (subset build, 10 kernels) against HEAD 46bbf7b's
# build of the same kernels: GPU tests, sanitizer on the heads test, bench A/B (HEAD, heads d=1, d=2, off)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
for d in hd head; do (cd $R/.carry/$d && for f in *.xz; do xz -dkf $f; done; chmod +x *); done
H=$R/.carry/hd; B=$R/.carry/head
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
cd $H
for t in test_select test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ')"; done
W4A16_SM90_SK_HEADS=0 timeout 100 ./test_gpu_gemv > $L/test_gpu_gemv_off.log 2>&1; echo "gemv off rc $? $(grep -E 'PASSED|FAILED' $L/test_gpu_gemv_off.log | tr '\n' ' ')"
NK=10240x8192,4096x14336,4096x4096,6144x4096,8192x8192,28672x4096
KS='*bf16_u4_fgs_*'
timeout 120 ./w4a16_bench --m 17,32,64,128,256 --nk $NK --kernels "$KS" --iterations 20 --csv -q -o $L/cublas.csv; echo "cublas rc $?"
for r in 1 2; do
  timeout 100 $B/w4a16_bench --m 17,32,64,128,256 --nk $NK --kernels "$KS" --no-cublas --iterations 20 --csv -q -o $L/head_r$r.csv; echo "head r$r rc $?"
  for d in 1 2 0; do
    W4A16_SM90_SK_HEADS=$d timeout 100 ./w4a16_bench --m 17,32,64,128,256 --nk $NK --kernels "$KS" --no-cublas --iterations 20 --csv -q -o $L/d${d}_r$r.csv; echo "d$d r$r rc $?"
  done
done
W4A16_TEST_FILTER=w4a16_sm90_bf16_u4_fgs_128x64x256_1x1x1_cooperative W4A16_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck ./test_gpu_gemv > $L/memcheck.log 2>&1; echo "memcheck rc $? $(tail -2 $L/memcheck.log | tr '\n' ' ')"
W4A16_TEST_FILTER=w4a16_sm90_bf16_u4_fgs_128x64x256_1x1x1_cooperative W4A16_TEST_QUICK=1 timeout 150 compute-sanitizer --tool racecheck ./test_gpu_gemv > $L/racecheck.log 2>&1; echo "racecheck rc $? $(tail -2 $L/racecheck.log | tr '\n' ' ')"

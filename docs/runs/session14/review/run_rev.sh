#!/bin/bash
# fourteenth session call 20 (review): the stream-K owner's partial reads written as one array of kStep partials (new)
# against HEAD 537152f (base): GPU tests on the nine-kernel build, racecheck, A/B bench (three rounds)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/rev14; for f in *.xz; do xz -dkf $f; done; chmod +x bench_* test_*
for t in test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ')"; done
W4A16_TEST_FILTER=w4a16_sm90_bf16_u4_fgs_128x32x256_1x1x1_cooperative W4A16_TEST_QUICK=1 timeout 100 compute-sanitizer --tool racecheck ./test_gpu_gemv > $L/san_racecheck.log 2>&1
echo "racecheck rc $? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $L/san_racecheck.log | tr '\n' ' ')"
for r in 1 2 3; do for v in base new; do
  timeout 120 ./bench_$v --m 16,32,64 --nk 4096x4096,4096x14336,10240x8192,57344x8192,3584x3584,3072x8192 --no-cublas --csv -q -o $L/rv_${v}_r$r.csv > /dev/null 2>&1
  echo "$v r$r rc $?"
done; done

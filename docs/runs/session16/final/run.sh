#!/bin/bash
# sixteenth session call 8: the default build with the flag warp and the 48-register producer (HEAD
# af199f9 + the flag warp): GPU tests; a full-space subset (pingpong and cluster stream-K) through
# the GPU tests and the sanitizers; the bench with cuBLAS over the eight layers for the issue bars
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
for d in fin pp; do (cd $R/.carry/$d && for f in *.xz; do xz -dkf $f; done; chmod +x *); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
cd $R/.carry/fin
for t in test_select test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"; done
cd $R/.carry/pp
for t in test_gpu_gemv test_gpu_kernels; do timeout 100 ./$t > $L/pp_$t.log 2>&1; echo "pp $t rc $? $(grep -E 'PASSED|FAILED' $L/pp_$t.log | tr '\n' ' ') ${SECONDS}s"; done
for k in w4a16_sm90_bf16_u4_fgs_64x64x256_1x1x1_pingpong w4a16_sm90_bf16_u4_fgs_128x32x256_2x1x1_cooperative; do
  for tool in racecheck synccheck memcheck; do
    W4A16_TEST_FILTER=$k timeout 60 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/pp_${tool}_$k.log 2>&1; echo "$tool $k rc $? $(tail -1 $L/pp_${tool}_$k.log) ${SECONDS}s"
  done
done
cd $R/.carry/fin
for tool in racecheck synccheck; do
  W4A16_TEST_FILTER=w4a16_sm90_bf16_u4_fgs_128x256x64_2x1x1_cooperative timeout 60 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/${tool}_128x256x64_2x1x1.log 2>&1; echo "$tool 128x256x64 2x1x1 rc $? $(tail -1 $L/${tool}_128x256x64_2x1x1.log) ${SECONDS}s"
done
for r in 1 2; do
  timeout 200 ./w4a16_bench --m 1,16,64,256,1024 --iterations 20 --top 3 --csv -q -o $L/bench_r$r.csv; echo "bench r$r rc $? ${SECONDS}s"
  [ $SECONDS -gt 330 ] && break
done

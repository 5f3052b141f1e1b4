#!/bin/bash
# sixteenth session call 7: stream-K flags by the flag warp: fw1 = call 6's build (owners' flags polled
# by ld.acquire), fw2 = relaxed polls + one fence, flags cleared after the handoff; fw0 = no flag warp
# (W4A16_SM90_FLAG_WARP=0); ten-kernel subset; GPU tests and sanitizers on fw2
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
for d in fw0 fw1 fw2; do (cd $R/.carry/$d && for f in *.xz; do xz -dkf $f; done; chmod +x *); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
cd $R/.carry/fw2
for t in test_gpu_gemv test_gpu_kernels; do timeout 120 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"; done
NK=10240x8192,4096x14336,4096x4096,28672x4096,57344x8192,8192x28672,6144x4096
KS='*bf16_u4_fgs_128x32x256*,*bf16_u4_fgs_128x64x256*,*bf16_u4_fgs_128x128x128*,*bf16_u4_fgs_256x64x128*'
for r in 1 2 3 4; do
  for v in fw0 fw1 fw2; do
    timeout 100 $R/.carry/$v/w4a16_bench --m 17,32,48,64,96,128 --nk $NK --kernels "$KS" --no-cublas --iterations 20 --csv -q -o $L/${v}_r$r.csv; echo "$v r$r rc $? ${SECONDS}s"
  done
  [ $SECONDS -gt 400 ] && break
done
for tool in racecheck synccheck memcheck; do
  [ $SECONDS -gt 560 ] && break
  W4A16_TEST_FILTER=w4a16_sm90_bf16_u4_fgs_128x32x256_1x1x1_cooperative timeout 60 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/${tool}_gemv.log 2>&1; echo "$tool rc $? $(tail -1 $L/${tool}_gemv.log) ${SECONDS}s"
done

#!/bin/bash
# thirteenth session call 14: 25 instantiations of the full space (pingpong, clusters 2x1x1 / 1x2x1 / 2x2x1, wg4, two-CTA tiles, every mode) with the one-row scale map
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/sample; for f in *.xz; do xz -dkf $f; done; chmod +x *
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 300 ./test_gpu_kernels > $L/kernels.log 2>&1; echo "kernels rc $? $(grep -E 'PASSED|FAILED' $L/kernels.log | tr '\n' ' ')"
grep -E 'FAIL' $L/kernels.log | head -20
timeout 200 ./test_gpu_gemv > $L/gemv.log 2>&1; echo "gemv rc $? $(grep -E 'PASSED|FAILED|SKIPPED' $L/gemv.log | tr '\n' ' ')"
for k in w4a16_sm90_bf16_u4_fgsz_64x32x64_2x2x1_pingpong w4a16_sm90_bf16_u4_pc_128x128x128_2x1x1_cooperative; do
  for tool in memcheck racecheck synccheck; do
    W4A16_TEST_QUICK=1 W4A16_TEST_FILTER=$k timeout 120 compute-sanitizer --tool $tool ./test_gpu_kernels > $L/san_${tool}_$k.log 2>&1
    echo "$tool $k rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $L/san_${tool}_$k.log | tr '\n' ' ')"
  done
done

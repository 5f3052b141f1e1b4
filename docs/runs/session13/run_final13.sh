#!/bin/bash
# thirteenth session: default build with scale rows by the 2-D map from one row (s2d_min_rows): tests,
# sanitizers, A/B against W4A16_SM90_S2D=4 (the old rule), bench vs cuBLAS, heuristic
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/def; for f in *.xz; do xz -dkf $f; done; chmod +x *
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version,power.limit,temperature.gpu --format=csv,noheader | tee $L/device.txt
for t in test_gpu_gemv test_select test_gpu_kernels; do timeout 240 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ')"; done
for k in w4a16_sm90_bf16_u4_fgs_128x128x128_1x1x1_cooperative w4a16_sm90_f16_u4_fgsz_128x16x128_1x1x1_cooperative w4a16_sm90_bf16_u4_pc_128x256x64_2x1x1_cooperative; do
for tool in memcheck racecheck synccheck; do
  W4A16_TEST_FILTER=$k W4A16_TEST_QUICK=1 timeout 120 compute-sanitizer --tool $tool ./test_gpu_kernels > $L/san_${tool}_$k.log 2>&1
  echo "$tool $k rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $L/san_${tool}_$k.log | tr '\n' ' ')"
done; done
for r in 1 2; do for v in new old; do
  if [ $v = old ]; then export W4A16_SM90_S2D=4; else unset W4A16_SM90_S2D; fi
  timeout 150 ./w4a16_bench --m 1,8,16,32,64,128,256 --kernels '*sm90_bf16_u4_fgs_*' --csv -q -o $L/bench_${v}_r$r.csv > /dev/null 2>&1
  echo "bench $v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done; done
unset W4A16_SM90_S2D
timeout 200 ./w4a16 tune --compare-heuristic --no-store --m 1,4,8,16,24,32,48,64,96,128,256 --model llama3-8b,llama3-70b --dump $L/heur.tsv > $L/tune.txt 2>&1; echo "tune bf16 g128 rc $? $(tail -2 $L/tune.txt | tr '\n' ' ')"

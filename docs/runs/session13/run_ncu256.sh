#!/bin/bash
# thirteenth session call 2: ncu on the M = 256 tiles (8192x8192)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/big; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench
for k in 128x128x128_1x1x1_cooperative 128x256x64_1x1x1_cooperative; do
  timeout 200 ncu --target-processes all --kernel-name regex:w4a16_sm90 --launch-skip 3 --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section SchedulerStats \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__cycles_active.avg \
    -o $L/ncu_$k ./w4a16_bench --m 256 --nk 8192x8192 --kernels "*bf16_u4_fgs_$k" --no-cublas -q > $L/ncu_run_$k.log 2>&1
  echo "ncu $k rc $?"
  ncu -i $L/ncu_$k.ncu-rep --print-details all > $L/ncu_$k.txt 2>&1
  ncu -i $L/ncu_$k.ncu-rep --page source --csv --print-source sass > $L/ncu_src_$k.csv 2>&1
  rm -f $L/ncu_$k.ncu-rep
done

#!/bin/bash
# fifteenth session call 3: where 128x64x256 at M = 64 is bound (L2?), 1x1x1 vs 2x1x1 (ncu, clocks not locked)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/cl; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench
which ncu; ncu --version | tail -1
timeout 100 ./w4a16_bench --m 32,64 --nk 10240x8192,57344x8192 --no-cublas --iterations 20 --csv -q -o $L/bench.csv; echo "bench rc $?"
M=gpu__time_duration.sum,lts__t_bytes.sum.per_second,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,smsp__cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,sm__inst_executed.sum,gpc__cycles_elapsed.max,lts__t_sectors_srcunit_tex_op_read.sum
for kern in 1x1x1 2x1x1; do for nk in 10240x8192 57344x8192; do
  timeout 120 ncu --clock-control none --kernel-name regex:w4a16_sm90 --launch-skip 4 --launch-count 2 --metrics $M --csv ./w4a16_bench --m 64 --nk $nk --kernels "*128x64x256_${kern}*" --no-cublas --warmup 2 --iterations 3 -q > $L/ncu_${kern}_${nk}.csv 2>$L/ncu_${kern}_${nk}.err
  echo "ncu $kern $nk rc $?"
done; done
timeout 100 ncu --clock-control none --kernel-name regex:w4a16_sm90 --launch-skip 4 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats ./w4a16_bench --m 64 --nk 10240x8192 --kernels "*128x64x256_1x1x1*" --no-cublas --warmup 2 --iterations 3 -q > $L/ncu_full_1x1x1.txt 2>&1; echo "full rc $?"
timeout 100 ncu --clock-control none --kernel-name regex:w4a16_sm90 --launch-skip 4 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats ./w4a16_bench --m 64 --nk 10240x8192 --kernels "*128x64x256_2x1x1*" --no-cublas --warmup 2 --iterations 3 -q > $L/ncu_full_2x1x1.txt 2>&1; echo "full2 rc $?"

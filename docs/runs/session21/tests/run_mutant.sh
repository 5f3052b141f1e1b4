#!/bin/bash
# twenty-first session: (1) a mutant build (128x16x256 / 128x64x256 with the prefetched stages'
# activations issued before griddepcontrol.wait) must fail test_launch_order; (2) test_gpu_gemv of
# the default build with test_selected_workspace
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
for i in 1 2 3; do timeout 120 ./mutant_gemv > $L/mutant_$i.log 2>&1; echo "mutant run $i rc $? $(grep -E '^\[  FAILED  \] test' $L/mutant_$i.log | sort -u | tr '\n' ' ') ${SECONDS}s"; done
timeout 200 ./test_gpu_gemv > $L/gemv.log 2>&1; echo "gemv rc $? $(grep -E '^\[  (PASSED|FAILED)' $L/gemv.log | tr '\n' ' ') ${SECONDS}s"
grep -h "selected kernels" $L/gemv.log

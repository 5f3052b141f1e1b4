#!/bin/bash
# twenty-second session call 9: which change hangs - the part map as a parameter with a whole
# cluster_sync at the start (bns) or with the split cluster barrier (bsp); 20 s each
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
for b in bns bsp; do
  timeout 20 ./$b --m 16 --nk 10240x8192 --kernels '*128x16x256*' --no-cublas --iterations 20 > $L/$b.txt 2>&1; echo "$b rc $?" | tee -a $L/$b.txt; tail -3 $L/$b.txt
done

#!/bin/bash
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
mkdir -p $OUT/logs; L=$OUT/logs
fin() { cd $OUT && tar cJf logs.txz logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/m2/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
for r in 1 2 3; do
 for v in 2 3 3e; do ./bench$v --m 1,4,8 --kernels 'w4a16_gemv_*' --no-cublas --iterations 20 --csv -q -o $L/v${v}_r$r.csv 2>>$L/err.txt; done
done

#!/bin/bash
# thirty-first session, call 4: the runtime's picks (w4a16_select, no config cache) on the problems of
# call 1's eager ranking (eager/), to price what an eager caller of kernel NULL loses
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
./picks_probe | tee $L/picks.txt

#!/bin/bash
# fourteenth session call 19: where the one spilled slot of 128x16x256 / 128x256x64 / 256x16x128 is (SASS around STL / LDL)
L=$OUT/logs; mkdir -p $L
cd .carry/sass
for o in *.o; do cuobjdump -sass $o > $L/${o%.cu.o}.sass 2>&1; echo "$o $(grep -c HGMMA $L/${o%.cu.o}.sass) HGMMA, $(grep -c 'STL\|LDL' $L/${o%.cu.o}.sass) STL/LDL"; grep -n 'STL\|LDL' $L/${o%.cu.o}.sass | head -20; done
cd $OUT && tar cJf logs.txz logs && rm -rf logs

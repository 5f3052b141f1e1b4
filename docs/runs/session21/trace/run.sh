#!/bin/bash
# twenty-first session: per-CTA timeline of the last graph replay (trace.diff: globaltimer at entry, the
# producer's wait, each unit's mainloop start / end of consumer thread 128, the owner's flag barrier,
# the fixup's end, the consumers' end, the flag warp's flags) of 128x16x256 / 128x64x256 launches
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
E='*bf16_u4_fgs_128x16x256_1x1x1*'; C='*bf16_u4_fgs_128x64x256_1x1x1*'
for c in "$E 16 10240x8192 e16" "$E 1 10240x8192 e1" "$E 16 8192x8192 e16k" "$C 64 10240x8192 c64" "$E 16 57344x8192 e16big"; do
  set -f; set -- $c; set +f
  W4A16_SM90_TRACE_FILE=$L/$4.txt ./tb --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o $L/$4.csv
  echo "$4 $(tail -1 $L/$4.csv | cut -d, -f9,11) $(wc -l < $L/$4.txt) CTAs"
done

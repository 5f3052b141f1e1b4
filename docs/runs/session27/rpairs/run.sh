#!/bin/bash
# twenty-seventh session: the M = 256 / 1024 / 4096 bars as pairs in rounds: per problem the fastest
# sm90 kernel of rbars/ (picks.txt: M, NxK, tile_cluster) and cuBLASLt's bf16 algorithms in the same
# rounds of one process (w4a16_bench --rounds), so that only these two kinds of launch set the card's
# power state; two processes a problem, the second pass in the reverse order; analyse with
# docs/runs/session20/pairs.py (all.csv lines: 1,round,<csv>)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for r in 1 2; do
  if [ $r = 1 ]; then P=$(cat $R/.carry/a/picks.txt | tr ' ' ':'); else P=$(tac $R/.carry/a/picks.txt | tr ' ' ':'); fi
  for p in $P; do
    IFS=: read m nk t <<< "$p"
    timeout 150 ./w4a16_bench --m $m --nk $nk --kernels "w4a16_sm90_bf16_u4_fgs_${t}_cooperative" --rounds --iterations 20 --csv -q -o /tmp/o.csv || echo "rc $? M=$m $nk"
    tail -n +2 /tmp/o.csv | sed "s/^/1,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

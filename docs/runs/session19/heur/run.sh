#!/bin/bash
# nineteenth session call 7: profiles of M = 513..1024 (and 257..512, 1025..2048 for reference) for
# the heuristic's rows there, two runs
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
for r in a b; do
  timeout 250 ./w4a16 tune --compare-heuristic --m 320,384,448,512,520,640,768,896,1024,1536,2048 --model llama3-8b,llama3-70b --no-store --dump $L/dump_$r.tsv > $L/heur_$r.txt 2>&1; echo "heur $r rc $? ${SECONDS}s"
done

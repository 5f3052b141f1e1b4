#!/bin/bash
# nineteenth session call 9: the refitted rows of M = 513..2048 on M values they were not fitted on
# (bf16 group 128), and f16 / zero points / group 64 / per-column at a few of them
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
H="./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --no-store"
timeout 200 $H --m 576,704,832,960,1152,1280,1792 --dump $L/val.tsv > $L/val.txt 2>&1; echo "val rc $? ${SECONDS}s"
timeout 100 $H --m 640,1024,1536 --dtype f16 --dump $L/f16.tsv > $L/f16.txt 2>&1; echo "f16 rc $? ${SECONDS}s"
timeout 100 $H --m 640,1024,1536 --mode fgsz --dump $L/zp.tsv > $L/zp.txt 2>&1; echo "zp rc $? ${SECONDS}s"
timeout 100 $H --m 640,1024,1536 --group 64 --dump $L/g64.tsv > $L/g64.txt 2>&1; echo "g64 rc $? ${SECONDS}s"
timeout 100 $H --m 640,1024,1536 --mode pc --dump $L/pc.tsv > $L/pc.txt 2>&1; echo "pc rc $? ${SECONDS}s"
for f in val f16 zp g64 pc; do echo "$f: $(grep 'within 10%' $L/$f.txt)"; done

#!/bin/bash
# seventeenth session call 15: the heuristic on the final default build; the TMA GEMV in the other
# dtype / modes against 1ac559f's code (before the next-CTA rule)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
mkdir -p $OUT/logs; L=$OUT/logs
fin() { cd $OUT && tar cJf logs.txz logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/z/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
timeout 200 ./w4a16 tune --compare-heuristic --m 1,2,4,8,16,32,64,128 --model llama3-8b,llama3-70b --no-store --dump $L/heur.tsv > $L/heur.md 2>&1; echo "tune rc $? ${SECONDS}s"
tail -3 $L/heur.md
NK=4096x4096,6144x4096,4096x14336,10240x8192,28672x4096
for r in 1 2; do
 for v in head new; do
  for o in "--dtype f16" "--mode fgsz" "--mode pc"; do
   t=$(echo $o | tr -d ' -'); ./bench_$v --m 1,4 --nk $NK $o --kernels 'w4a16_gemv_*_tma' --no-cublas --iterations 20 --csv -q -o $L/v${v}_${t}_r$r.csv 2>>$L/err.txt
  done
 done
done
echo "done ${SECONDS}s"

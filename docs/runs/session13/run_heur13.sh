#!/bin/bash
# thirteenth session call 13: the heuristic on fafb252's default build for other dtypes, modes and groups
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/def; for f in w4a16.xz; do xz -dkf $f; done; chmod +x w4a16
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for cfg in "f16 fgs 32" "bf16 fgs 64" "f16 fgsz 128" "bf16 pc 0"; do
  set -- $cfg
  g=""; [ $3 != 0 ] && g="--group $3"
  timeout 140 ./w4a16 tune --compare-heuristic --no-store --m 1,8,16,32,64,128 --model llama3-8b,llama3-70b --dtype $1 --mode $2 $g --dump $L/heur_$1_$2_$3.tsv > $L/tune_$1_$2_$3.txt 2>&1
  echo "tune $1 $2 $3 rc $? $(tail -2 $L/tune_$1_$2_$3.txt | tr '\n' ' ')"
done

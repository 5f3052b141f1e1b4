#!/bin/bash
# thirteenth session call 19: test_select on the device and the live heuristic for bf16 group 64 with the refitted alternate rows
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/def3; for f in *.xz; do xz -dkf $f; done; chmod +x test_select w4a16
timeout 100 ./test_select > $L/test_select.log 2>&1; echo "test_select rc $? $(grep -E 'PASSED|FAILED|SKIPPED' $L/test_select.log | tr '\n' ' ')"
for cfg in "bf16 fgs 64" "f16 fgs 32" "f16 fgs 64"; do
  set -- $cfg
  timeout 140 ./w4a16 tune --compare-heuristic --no-store --m 1,4,8,12,16 --model llama3-8b,llama3-70b --dtype $1 --mode $2 --group $3 --dump $L/heur_$1_$2_$3.tsv > $L/tune_$1_$2_$3.txt 2>&1
  echo "tune $1 $2 $3 rc $? $(tail -2 $L/tune_$1_$2_$3.txt | tr '\n' ' ')"
done

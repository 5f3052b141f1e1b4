#!/bin/bash
# twenty-seventh session: issue 3's M >= 64 bars timed in rounds (w4a16_bench --rounds, 0475758):
# per problem (eight layers x M = 64, 256, 1024, 4096) one bench process timing every bf16 fgs sm90
# kernel of the default build and cuBLASLt's bf16 algorithms in the same rounds, two processes a
# problem (the second pass in the reverse order); analyse with rbars.py
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
LAYERS="6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672"
MS="${MS:-64 256 1024 4096}"
SECONDS=0
for r in ${ROUNDS:-1 2}; do
  P=""; for nk in $LAYERS; do for m in $MS; do P="$P $m:$nk"; done; done
  [ $((r % 2)) = 0 ] && P=$(echo $P | tr ' ' '\n' | tac | tr '\n' ' ')
  for p in $P; do
    m=${p%%:*}; nk=${p#*:}
    set -f; timeout 150 ./w4a16_bench --m $m --nk $nk --kernels '*sm90_bf16_u4_fgs_*' --rounds --iterations 20 --csv -q -o /tmp/o.csv; rc=$?; set +f
    [ $rc = 0 ] || echo "rc $rc M=$m $nk"
    tail -n +2 /tmp/o.csv | sed "s/^/$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

#!/bin/bash
# twenty-fifth session call 9: every bar of issues 3 and 4 on the default build of HEAD (d5532da's
# device code): (1) per problem (eight layers x M = 1, 16, 64, 256, 1024, 4096; the GEMV also at
# M = 2, 4, 8) one bench process timing every bf16 fgs kernel of the family, no cuBLAS, to rank them
# (sel_*.csv); (2) per problem the best sm90 kernel, and for M <= 16 the best GEMV, each in its own
# process with cuBLAS bf16, two rounds (all.csv, pairs.py)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
LAYERS="6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672"
SECONDS=0
for nk in $LAYERS; do
  for m in 1 16 64 256 1024 4096; do
    set -f; timeout 120 ./w4a16_bench --m $m --nk $nk --kernels '*sm90_bf16_u4_fgs_*' --no-cublas --iterations 10 --csv -q -o $L/sel_sm90_${nk}_$m.csv; set +f
  done
  for m in 1 2 4 8 16; do
    set -f; timeout 120 ./w4a16_bench --m $m --nk $nk --kernels '*gemv_bf16_u4_fgs_*' --no-cublas --iterations 10 --csv -q -o $L/sel_gemv_${nk}_$m.csv; set +f
  done
done
echo "selection ${SECONDS}s"
best() {  # the fastest OK kernel of a selection csv
  python3 - "$1" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['status'] == 'W4A16_STATUS_OK']
print(min(rows, key=lambda r: float(r['median_us']))['kernel'] if rows else 'none')
PY
}
SECONDS=0
for r in 1 2; do
  for nk in $LAYERS; do
    for m in 1 16 64 256 1024 4096; do
      k=$(best $L/sel_sm90_${nk}_$m.csv)
      timeout 120 ./w4a16_bench --m $m --nk $nk --kernels "$k" --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
    done
    for m in 1 2 4 8 16; do
      k=$(best $L/sel_gemv_${nk}_$m.csv)
      timeout 120 ./w4a16_bench --m $m --nk $nk --kernels "$k" --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

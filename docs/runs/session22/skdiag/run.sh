#!/bin/bash
# twenty-second session call 7: what the stream-K pairs cost - v0 plain stream-K (b1,
# W4A16_SM90_SKPAIR=0), v1 the pairs (b1), v2 the pairs with rank 1 leaving right after its
# st.async (b2, scratch W4A16_SCRATCH_NOWAIT1), v3 plain stream-K that also computes the part map
# in every warp (b3, scratch W4A16_SCRATCH_PRO, W4A16_SM90_SKPAIR=0)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
E='*128x16x256*'; G='*128x64x256*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$G 64 10240x8192")
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2 3; do
      v=$(( (j + r + i) % 4 ))
      case $v in 0) b=b1; e=0;; 1) b=b1; e=1;; 2) b=b2; e=1;; 3) b=b3; e=0;; esac
      W4A16_SM90_SKPAIR=$e ./$b --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv

#!/bin/bash
# sixteenth session call 11: M <= 16 on 10240x8192 (issue 3's last M <= 16 layer) and two controls,
# 128x16x256 / 128x16x128 of the default build (HEAD db4127c) under launch switches: weight stages
# before griddepcontrol.wait (W4A16_SM90_PREFETCH), scale chunks outside the K pair (SCHUNK=2)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/fin && xz -dkf w4a16_bench.xz && chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
KS='*sm90_bf16_u4_fgs_128x16x256*,*sm90_bf16_u4_fgs_128x16x128*'
NK=10240x8192,8192x8192,57344x8192
for r in 1 2 3; do
  for v in base pf-2 pf2 pf8 sc2; do
    case $v in base) E="";; pf-2) E="W4A16_SM90_PREFETCH=-2";; pf2) E="W4A16_SM90_PREFETCH=2";; pf8) E="W4A16_SM90_PREFETCH=8";; sc2) E="W4A16_SM90_SCHUNK=2";; esac
    env $E timeout 60 ./w4a16_bench --m 1,8,16 --nk $NK --kernels "$KS" --no-cublas --iterations 20 --csv -q -o $L/${v}_r$r.csv; echo "$v r$r rc $? ${SECONDS}s"
  done
done
echo end

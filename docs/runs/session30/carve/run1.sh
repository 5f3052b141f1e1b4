#!/bin/bash
# thirtieth session, call 1: test_gpu_gemv after 2302a72 (expect_reference / capture_gemm) and
# test_gpu_kernels, both built with the twenty-ninth session's carveout_gemv_sm80.diff applied (the
# register-staged GEMV and the sm80 family ask for the whole carveout); hostcost_probe; then
# w4a16 tune --compare-heuristic, HEAD db9354d's tool (w4a16_head) and the patched one interleaved:
# the eight layers at M = 1..16 (bf16, fp16 scale-only) and M = 32..256 (bf16), then again while time lasts
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 150 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s $(tail -1 $L/test_gpu_gemv.txt)"
timeout 200 ./test_gpu_kernels > $L/test_gpu_kernels.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s $(tail -1 $L/test_gpu_kernels.txt)"
for mm in 1 4; do timeout 30 ./hostcost_probe $mm > $L/hostcost_m$mm.txt 2>&1; done; echo "hostcost ${SECONDS}s"; cat $L/hostcost_m1.txt
prof() {  # pass dtype mode mlist tag
  for b in w4a16_head w4a16; do
    [ $SECONDS -gt 500 ] && return
    timeout 90 ./$b tune --compare-heuristic --model llama3-8b,llama3-70b --m $4 \
      --dtype $2 --mode $3 --no-store --cache /tmp/c.json --dump $L/$5_${b}_$2_$3_p$1.tsv > $L/$5_${b}_$2_$3_p$1.md 2>&1
    echo "p$1 $5 $b $2 $3 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/$5_${b}_$2_$3_p$1.md)"
  done
}
DEC=1,2,3,4,5,6,7,8,9,10,12,14,16
prof 1 bf16 fgs $DEC dec; prof 1 f16 fgs $DEC dec; prof 1 bf16 fgs 32,64,128,256 mid
prof 2 bf16 fgs $DEC dec; prof 2 f16 fgs $DEC dec; prof 2 bf16 fgs 32,64,128,256 mid

#!/bin/bash
# Build the sm90 dev harness for the kernels matching PATTERN (generator rules):
#   runtime/cuda/sm90/dev/build.sh OUT_DIR 'w4a16_sm90_bf16_u4_fgs_128x64x64_*' [extra nvcc flags]
# Kernel objects are cached by content (make-like: rebuilt when the .cu or a header is newer).
set -e
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
PAT=$2
shift 2
EXTRA="$*"
NVCC="nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr -I$ROOT/include -I$ROOT/runtime -I$ROOT/runtime/cuda -I$OUT/gen $EXTRA"
/usr/bin/python3 "$ROOT/runtime/cuda/sm90/dev/gen_devreg.py" "$OUT/gen" "$PAT" > "$OUT/kernels.list"
HDRS="$ROOT/runtime/cuda/sm90/gemm_sm90.cuh $ROOT/runtime/cuda/sm90/sm90_ptx.cuh $ROOT/runtime/cuda/sm90/sm90_wgmma.cuh $ROOT/runtime/cuda/common/dequant.cuh $ROOT/runtime/cuda/common/splitk.cuh"
newest_hdr=$(ls -t $HDRS | head -1)
objs=()
todo=()
for k in $(cat "$OUT/kernels.list"); do
  o="$OUT/obj/$k.o"
  objs+=("$o")
  if [ ! -f "$o" ] || [ "$OUT/gen/$k.cu" -nt "$o" ] || [ "$newest_hdr" -nt "$o" ]; then todo+=("$k"); fi
done
mkdir -p "$OUT/obj" "$OUT/ptxas"
export NVCC OUT
printf '%s\n' "${todo[@]}" | grep . | xargs -r -P2 -I{} bash -c 'start=$(date +%s.%N); $NVCC -Xptxas -v -c "$OUT/gen/{}.cu" -o "$OUT/obj/{}.o" 2> "$OUT/ptxas/{}.txt" || { cat "$OUT/ptxas/{}.txt"; exit 1; }; end=$(date +%s.%N); echo "{} $(echo "$end - $start" | bc) s" >> "$OUT/compile_times.txt"'
$NVCC -c "$ROOT/runtime/cuda/sm90/dev/sm90_devtest.cu" -o "$OUT/obj/sm90_devtest.o"
$NVCC -o "$OUT/sm90_devtest" "$OUT/obj/sm90_devtest.o" "${objs[@]}" -lcublas
echo "built $OUT/sm90_devtest with ${#objs[@]} kernels"

#!/bin/bash
# run from the repository root: bash docs/runs/session14/replay_all.sh [path/to/w4a16]
# replay_all.sh W4A16_BIN: the heuristic of this build against every stored profile
B=${1:-build/tools/w4a16}
D=docs/runs
# this session's profiles are stored xz-compressed (the working tree that travels to the device is
# limited): a plain copy in a temporary folder
T=$(mktemp -d); trap 'rm -rf $T' EXIT
for f in $(cd $D && ls session14/*/*.tsv.xz session13/heur_alt/*.tsv.xz); do mkdir -p $T/$(dirname $f); xz -dc $D/$f > $T/${f%.xz}; done
D14=$T/session14
rep() { # label files...
  local lab=$1; shift; local ok=0 tot=0 worst=1
  for f in "$@"; do
    out=$($B tune --replay $f 2>&1 | grep "within 10%")
    o=$(echo "$out" | sed -E 's/.*: ([0-9]+) of ([0-9]+).*worst ratio ([0-9.]+|inf).*/\1 \2 \3/')
    ok=$((ok+$(echo $o | cut -d' ' -f1))); tot=$((tot+$(echo $o | cut -d' ' -f2)))
    w=$(echo $o | cut -d' ' -f3); worst=$(python3 -c "print(max(float('$worst'),float('$w')))")
  done
  # worst inf: a pick this build has that the stored profile did not time (a kernel added since)
  printf "%-28s %4d / %4d  (%.1f%%)  worst %s\n" $lab $ok $tot $(python3 -c "print(100*$ok/$tot)") $worst
}
rep def_bf16_g128_s14 $D14/gen_a/def.tsv
rep def_bf16_g128_s13 $D/session13/heur/heur_bf16_fgs_128.tsv
rep def_large_s13 $D/session13/final_head/heur_large.tsv
rep def_modes_s13 $D/session13/heur/heur_bf16_fgs_64.tsv $D/session13/heur/heur_bf16_pc_0.tsv $D/session13/heur/heur_f16_fgs_32.tsv $D/session13/heur/heur_f16_fgsz_128.tsv
rep def_modes_s13alt $T/session13/heur_alt/*.tsv
rep gen_a_bf16_g128 $D14/gen_a/g_*.tsv
rep gen_b_bf16_g128 $D14/gen_b/b_*.tsv
rep gen_b_f16_zp $D14/gen_b/zp_*.tsv
rep gen_b_bf16_g64 $D14/gen_b/g64_*.tsv
rep live1_bf16_g128_heldout $D14/live1/c_*.tsv
rep live1_f16_zp_heldout $D14/live1/zp_*.tsv
rep live1_bf16_g64_heldout $D14/live1/g64_*.tsv
rep live1_def $D14/live1/def.tsv
rep final_bf16_g128 $D14/final/c_*.tsv
rep final_def $D14/final/def.tsv

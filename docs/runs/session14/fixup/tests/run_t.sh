#!/bin/bash
# fourteenth session call 15: test_gpu_gemv with test_stream_k_many (the tile_k 256 tiles): default build (ok), the 9-kernel
# build (subset_ok), and a mutant that skips every second partial (mut: must fail)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/t14; for f in *.xz; do xz -dkf $f; done; chmod +x tgg_*
for t in tgg_ok tgg_subset_ok tgg_mut; do timeout 250 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED|ERROR' $L/$t.log | head -4 | tr '\n' ' ')"; done
W4A16_TEST_FILTER=w4a16_sm90_bf16_u4_fgs_128x32x256_1x1x1_cooperative W4A16_TEST_QUICK=1 timeout 100 compute-sanitizer --tool racecheck ./tgg_subset_ok > $L/san_racecheck.log 2>&1
echo "racecheck rc $? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $L/san_racecheck.log | tr '\n' ' ')"
W4A16_TEST_FILTER=w4a16_sm90_bf16_u4_fgs_128x32x256_1x1x1_cooperative W4A16_TEST_QUICK=1 timeout 100 compute-sanitizer --tool synccheck ./tgg_subset_ok > $L/san_synccheck.log 2>&1
echo "synccheck rc $? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $L/san_synccheck.log | tr '\n' ' ')"

export LD_LIBRARY_PATH=$PWD/.carry/lib:$LD_LIBRARY_PATH
# usage (on the GPU machine, repo root): OUT=dir tools/diag_clocks.sh [BUILD_DIR]
B=${1:-build}/bench/w4a16_bench
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 20 > $OUT/smi.csv 2>&1 &
SP=$!
sleep 1
mark() { echo "$(date +%H:%M:%S.%N | cut -c1-12) $*" >> $OUT/marks.txt; }
mark start_sm90_4096; $B --kernels w4a16_sm90_bf16_u4_fgs_128x256x64_1x1x1_cooperative --no-cublas --nk 8192x8192 --m 4096 --iterations 40 --csv -q >> $OUT/diag.csv 2>&1; mark end_sm90_4096
sleep 1
mark start_cublas_4096; $B --kernels nothing_matches --nk 8192x8192 --m 4096 --iterations 40 --cublas-algos 1 --csv -q >> $OUT/diag.csv 2>&1; mark end_cublas_4096
sleep 1
mark start_sm90_1024; $B --kernels w4a16_sm90_bf16_u4_fgs_128x256x64_1x1x1_cooperative --no-cublas --nk 8192x8192 --m 1024 --iterations 40 --csv -q >> $OUT/diag.csv 2>&1; mark end_sm90_1024
sleep 1
kill $SP
cat $OUT/marks.txt; cat $OUT/diag.csv | cut -d, -f1-3,9,11,14
python3 - <<'PY'
import os,datetime
out=os.environ['OUT']
marks=[l.split() for l in open(out+'/marks.txt')]
def t(s): h,m,x=s.split(':'); return int(h)*3600+int(m)*60+float(x)
rows=[]
for l in open(out+'/smi.csv'):
    p=[x.strip() for x in l.split(',')]
    if len(p)<7: continue
    try: ts=t(p[0].split()[1]); rows.append((ts,p))
    except Exception: pass
for i in range(0,len(marks),2):
    a=t(marks[i][0]); b=t(marks[i+1][0]); name=marks[i][1][6:]
    sel=[p for ts,p in rows if a<=ts<=b]
    def num(x):
        try: return float(x.split()[0])
        except: return None
    clk=[num(p[1]) for p in sel if num(p[1])]; pw=[num(p[3]) for p in sel if num(p[3])]
    busy=[(c,w,p[6]) for c,w,p in zip(clk,pw,sel) if w>300]
    print(name, "samples",len(sel), "clock min/median %s/%s"%(min(clk) if clk else '-', sorted(clk)[len(clk)//2] if clk else '-'),
          "power max %.0f"%(max(pw) if pw else 0), "busy(>300W) samples",len(busy),
          "busy clock median", sorted(c for c,_,_ in busy)[len(busy)//2] if busy else '-',
          "throttle reasons", sorted(set(r for _,_,r in busy)))
PY

import re,sys,subprocess
cur=None; out={}
for l in open(sys.argv[1],errors='replace'):
    m=re.search(r"Compiling entry function '(\S+)'",l)
    if m: cur=m.group(1)
    m=re.search(r"Function properties for (\S+)",l)
    if m: cur=m.group(1)
    m=re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",l)
    if m and cur: out[cur]=(int(m.group(1)),int(m.group(2)),int(m.group(3)))
names=sorted(out)
dm=subprocess.run(['c++filt'],input='\n'.join(names),capture_output=True,text=True).stdout.split('\n')
n=0
for nm,d in zip(names,dm):
    if out[nm][1] or out[nm][2]:
        n+=1
        d=re.sub(r'w4a16_sm90::','',d); d=re.sub(r'\(CUtensorMap_st.*','',d); d=re.sub(r'\(.*','',d)
        print(out[nm], d[:140])
print(n,'spilling of',len(out))

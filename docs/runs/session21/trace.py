"""Per-CTA timeline of one sm90 launch from a trace.diff dump (lines: cta, then 16 values: entry,
producer wait return, unit j mainloop start / end (j = 0..2), owner flag barrier, fixup end, consumers'
end, flag warp's flags, smid, unit j info). Times in us from the earliest producer wait return W.
Usage: trace.py dump.txt[.xz]"""
import lzma
import statistics as st
import sys

rows = []
for line in (lzma.open(sys.argv[1], 'rt') if sys.argv[1].endswith('.xz') else open(sys.argv[1])):
    v = [int(x) for x in line.split()]
    rows.append(v)
W = min(r[2] for r in rows if r[2])
us = lambda t: (t - W) / 1000.0 if t else float('nan')
def info(x):
    return dict(kb0=x & 1023, kn=(x >> 10) & 1023, contrib=(x >> 20) & 1, sk_last=(x >> 32) - 1)
print('CTAs %d; W spread %.2f us; entry %.2f..%.2f' % (len(rows), (max(r[2] for r in rows) - W) / 1e3,
      min(us(r[1]) for r in rows), max(us(r[1]) for r in rows)))
ends = sorted(rows, key=lambda r: r[11])
def summ(name, idx, sel=lambda r: True):
    xs = [us(r[idx]) for r in rows if r[idx] and sel(r)]
    if xs:
        print('%-34s n=%3d  min %6.2f  median %6.2f  max %6.2f' % (name, len(xs), min(xs), st.median(xs), max(xs)))
summ('producer wait return', 2)
for j in range(3):
    summ('unit %d start' % j, 3 + 2 * j)
    summ('unit %d mainloop end' % j, 4 + 2 * j)
owner = lambda r: r[9] != 0
summ('owner: flag barrier passed', 9)
summ('owner: flag warp flags seen', 12)
summ('owner: fixup end', 10)
summ('consumers end (owners)', 11, owner)
summ('consumers end (no owner unit)', 11, lambda r: not owner(r))
print('last 8 CTAs to end:')
for r in ends[-8:]:
    units = [info(r[14 + j]) for j in range(3) if r[3 + 2 * j]]
    lastend = max(r[4 + 2 * j] for j in range(3) if r[4 + 2 * j])
    print('  cta %3d sm %3d end %6.2f  last mainloop end %6.2f  flags %6.2f  barrier %6.2f  fixup %6.2f  units %s' % (
        r[0], r[13], us(r[11]), us(lastend), us(r[12]), us(r[9]), us(r[10]),
        ' '.join('[%d+%d%s%s]' % (u['kb0'], u['kn'], ' c' if u['contrib'] else '', ' o%d' % u['sk_last'] if u['sk_last'] >= 0 else '') for u in units)))

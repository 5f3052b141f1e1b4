"""Timeline of a tile-by-tile sm90 launch from trace.diff's dump (lines: cta, 16 values: 0 entry,
1 producer wait return, 2/3 unit 0 start / mainloop end, 4/5 unit 1, 6/7 unit 2, 8 first full stage,
9 fixup end, 10 consumers' end, 11 flag warp, 12 smid, 13-15 unit info): µs from the earliest wait
return W. Usage: tl.py dump.txt"""
import statistics as st
import sys

rows = [[int(x) for x in line.split()] for line in open(sys.argv[1])]
W = min(r[2] for r in rows if r[2])
us = lambda t: (t - W) / 1000.0
def summ(name, xs):
    xs = [x for x in xs]
    if xs:
        print('%-36s n=%3d  min %6.2f  median %6.2f  max %6.2f' % (name, len(xs), min(xs), st.median(xs), max(xs)))
summ('entry', [us(r[1]) for r in rows])
summ('producer wait return', [us(r[2]) for r in rows])
summ('first full stage (tile by tile)', [us(r[9]) for r in rows if r[9]])
for j in range(3):
    summ('unit %d start' % j, [us(r[3 + 2 * j]) for r in rows if r[3 + 2 * j]])
    summ('unit %d mainloop end' % j, [us(r[4 + 2 * j]) for r in rows if r[4 + 2 * j]])
    summ('unit %d mainloop length' % j, [(r[4 + 2 * j] - r[3 + 2 * j]) / 1e3 for r in rows if r[4 + 2 * j]])
summ('fixup end (owners)', [us(r[10]) for r in rows if r[10]])
summ('consumers end', [us(r[11]) for r in rows])
summ('end - last mainloop end', [(r[11] - max(r[4 + 2 * j] for j in range(3) if r[4 + 2 * j])) / 1e3 for r in rows])
# (tile by tile: slot 11 holds unit 0's mainloop in SM clocks: the clock over the mainloop)
if all(r[9] for r in rows):
    summ('unit 0 mainloop SM clock (GHz)', [r[12] / (r[4] - r[3]) for r in rows if r[4] > r[3]])
# (K pair: slot 9 is rank 1's "rank 0's stages are free" (odd CTAs) / rank 0's "rank 1's partial is in")
if any(r[10] for r in rows):
    summ('K pair rank 1: ring free, from its mainloop end', [(r[10] - r[4]) / 1e3 for r in rows if r[10] and r[0] % 2])
    summ('K pair rank 0: partial in, from its mainloop end', [(r[10] - r[4]) / 1e3 for r in rows if r[10] and r[0] % 2 == 0])
    summ('K pair rank 0: end, from partial in', [(r[11] - r[10]) / 1e3 for r in rows if r[10] and r[0] % 2 == 0])
    summ('K pair rank 1: end, from ring free', [(r[11] - r[10]) / 1e3 for r in rows if r[10] and r[0] % 2])
    summ('K pair rank 0 mainloop end', [us(r[4]) for r in rows if r[0] % 2 == 0])
    summ('K pair rank 1 mainloop end', [us(r[4]) for r in rows if r[0] % 2])

# pick_loss.py EAGERDIR PICKS: per problem, the eager time (w4a16_bench --eager, eager_*.csv) of the
# runtime's pick (picks_probe's lines) and of the graph-best kernel (graph_*.csv), over the eager-best
import csv, math, os, sys
d, picks = sys.argv[1], sys.argv[2]
ok = lambda f: [r for r in csv.DictReader(open(f)) if r['status'] == 'W4A16_STATUS_OK' and r['rank'] != 'ref']
gm = lambda x: math.exp(sum(map(math.log, x)) / len(x))
pl, gl = [], []
for line in open(picks):
    nk, m, kern, _ = line.split()
    m = int(m)
    E = {r['kernel']: float(r['median_us']) for r in ok(os.path.join(d, 'eager_%s.csv' % nk)) if int(r['m']) == m}
    G = {r['kernel']: float(r['median_us']) for r in ok(os.path.join(d, 'graph_%s.csv' % nk)) if int(r['m']) == m}
    eb, gb = min(E.values()), min(G, key=G.get)
    pl.append(E[kern] / eb); gl.append(E[gb] / eb)
    print('%-10s M=%-2d pick %-40s eager %.2f us (graph %.2f), eager best %.2f: pick %.3f, graph-best %.3f' % (
        nk, m, kern[6:], E[kern], G[kern], eb, pl[-1], gl[-1]))
print('runtime pick over the eager-best: geomean %.4f, max %.3f, over 5 %%: %d of %d' % (gm(pl), max(pl), sum(x > 1.05 for x in pl), len(pl)))
print('graph-best over the eager-best:   geomean %.4f, max %.3f, over 5 %%: %d of %d' % (gm(gl), max(gl), sum(x > 1.05 for x in gl), len(gl)))

# eager_rank.py LOGDIR: per problem, the graph-best kernel's eager time over the eager-best kernel's
# (the loss of an eager caller who takes the graph ranking), from eager_rank.sh's CSVs
import csv, glob, math, os, sys
d = sys.argv[1]
loss = []
for g in sorted(glob.glob(os.path.join(d, 'graph_*.csv'))):
    e = g.replace('graph_', 'eager_')
    rows = lambda f: [r for r in csv.DictReader(open(f)) if r['status'] == 'W4A16_STATUS_OK' and r['rank'] != 'ref']
    G, E = rows(g), rows(e)
    for m in sorted({int(r['m']) for r in G}):
        gm = {r['kernel']: float(r['median_us']) for r in G if int(r['m']) == m}
        em = {r['kernel']: (float(r['median_us']), float(r['host_us'] or 0)) for r in E if int(r['m']) == m}
        gbest = min(gm, key=gm.get)
        ebest = min(em, key=lambda k: em[k][0])
        x = em[gbest][0] / em[ebest][0]
        loss.append(x)
        print('%s M=%-2d graph best %-46s %.2f us (eager %.2f, host %.2f) | eager best %-46s %.2f us  loss %.3f' % (
            os.path.basename(g)[6:-4], m, gbest[6:], gm[gbest], em[gbest][0], em[gbest][1], ebest[6:], em[ebest][0], x))
print('geomean loss %.4f, max %.3f, over 5 %%: %d of %d' % (math.exp(sum(map(math.log, loss)) / len(loss)), max(loss),
                                                          sum(x > 1.05 for x in loss), len(loss)))

#!/usr/bin/env python3
"""Fit the H100 rule table's alternate rows: for each primary row of runtime/select.c, the kernel
class to use where the primary class cannot implement the problem (another quant mode, a group
size below a kernel's min_group, another dtype), so that the generic rules do not decide there.

Usage: python3 tools/fit_heuristic_alt.py runtime/select.c DUMP.tsv [DUMP.tsv ...]
The dumps are `w4a16 tune --compare-heuristic --dump` files of other modes / groups / dtypes
(docs/runs/session5/modes/). A sample (one problem of one dump) is "uncovered" by its primary row
when no kernel of the primary class ran on it; the alternate class is chosen over a row's
uncovered samples with tools/fit_heuristic.py's score (worst slowdown against the profiled best,
then the mean log slowdown), among the classes present in all of them, else in most of them.
Within a class the runtime's order decides (cost-model estimate, then more stages, then the name).
Prints each alternate row (name: the primary's + "-alt") to paste right after its primary row.
"""
import collections, csv, math, re, sys

ROW = re.compile(r'\{"(h100-[^"]+)",\s*([^}]*)\}')
FAMILY = {'W4A16_FAMILY_GEMV': 'gemv', 'W4A16_FAMILY_SM80': 'sm80', 'W4A16_FAMILY_SM90': 'sm90'}
FAM_C = {v: k for k, v in FAMILY.items()}


def primary_rows(path):
    rows = []
    for m in ROW.finditer(open(path).read()):
        name, f = m.group(1), [x.strip() for x in m.group(2).split(',')]
        if name.endswith('-alt'):
            continue
        v = [int(x) if re.fullmatch(r'-?\d+', x) else x for x in f]
        m0, m1, n0, n1, k0, k1 = v[0:6]
        cls = (FAMILY[v[10]], v[13], v[11], v[19], v[15])  # family, tile_n, tile_m, tile_k, stages (0 = any)
        rows.append(dict(name=name, m=(m0, m1), n=(n0, n1), k=(k0, k1), sm=v[6], cc=v[8], cls=cls))
    return rows


def inside(x, lo_hi):
    lo, hi = lo_hi
    return x >= lo and (hi == 0 or x <= hi)


def cls_of(r):
    return (r['family'], int(r['tile_n']), int(r['tile_m']), int(r['tile_k']))


def member(r, c):
    return cls_of(r) == c[:4] and (c[4] == 0 or int(r['stages']) == c[4])


def classes_of(r):
    return {cls_of(r) + (0,), cls_of(r) + (int(r['stages']),)}


def ctime(rs, c):
    mem = [r for r in rs if member(r, c)]
    if not mem:
        return None
    return float(min(mem, key=lambda r: (float(r['heur_est_us']), -int(r['stages']), r['kernel']))['median_us'])


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    prim = primary_rows(argv[1])
    prob = collections.defaultdict(list)
    for run, path in enumerate(argv[2:]):
        for r in csv.DictReader((l for l in open(path) if not l.startswith('#')), delimiter='\t'):
            if r['status'] == 'W4A16_STATUS_OK':
                prob[(int(r['m']), int(r['n']), int(r['k']), run)].append(r)
    best = {p: min(float(r['median_us']) for r in rs) for p, rs in prob.items()}
    uncovered = collections.defaultdict(list)
    for p, rs in prob.items():
        row = next((w for w in prim if inside(p[0], w['m']) and inside(p[1], w['n']) and inside(p[2], w['k'])), None)
        if row and not any(member(r, row['cls']) for r in rs):
            uncovered[row['name']].append(p)
    for w in prim:
        ps = uncovered.get(w['name'])
        if not ps:
            continue
        count = collections.Counter(c for p in ps for c in set().union(*[classes_of(r) for r in prob[p]]))
        most = max(count.values())
        cands = [c for c, n in count.items() if n == most]

        def score(c):
            rat = [ctime(prob[p], c) / best[p] for p in ps if ctime(prob[p], c)]
            return (max(rat) * 10 + sum(math.log(x) for x in rat), c[4] != 0, c)

        c = min(cands, key=score)
        rat = [ctime(prob[p], c) / best[p] for p in ps if ctime(prob[p], c)]
        print('// %s: %d uncovered samples, %s covers %d: %s' % (w['name'], len(ps), c, most,
                                                             ' '.join('%.2f' % x for x in rat)))
        (m0, m1), (n0, n1), (k0, k1) = w['m'], w['n'], w['k']
        print('    {"%s-alt", %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %s, %d, %d, %d, %d, %d, %d, 0, 0.0f, %d, %d},' %
              (w['name'], m0, m1, n0, n1, k0, k1, w['sm'], w['sm'], w['cc'], w['cc'], FAM_C[c[0]], c[2], c[2], c[1], c[1],
               c[4], c[4], c[3], c[3]))


if __name__ == '__main__':
    main(sys.argv)

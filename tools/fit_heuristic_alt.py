#!/usr/bin/env python3
"""Fit the H100 rule table's alternate rows: for each primary row of heuristics/rules.tsv, the kernel
class to use where the primary class cannot implement the problem (another quant mode, a group
size below a kernel's min_group, another dtype), so that the generic rules do not decide there.

Usage: python3 tools/fit_heuristic_alt.py heuristics/rules.tsv DUMP.tsv [DUMP.tsv ...]
The dumps are `w4a16 tune --compare-heuristic --dump` files of other modes / groups / dtypes
(heuristics/profiles/session5-modes-*). A sample (one problem of one dump) is "uncovered" by its primary row
when no kernel of the primary class ran on it; the alternate class is chosen over a row's
uncovered samples with tools/fit_heuristic.py's score (worst slowdown against the profiled best,
then the mean log slowdown), among the classes present in all of them, else in most of them.
Within a class the runtime's order decides (cost-model estimate, then more stages, then the name).
Prints each alternate row (name: the primary's + "-alt") to paste right after its primary row; a
row that has one already keeps it unless the new class is clearly better (the test of --zp below).

With --zp (first argument) it fits the zero-point rows instead: for each primary row, over the
samples of mode "fgsz" in its range, the class the table takes now (the primary's, else its
"-alt" row's) is compared with the best-scoring class present in those samples; where that class
lowers the worst slowdown by more than 3 % (or, at no worse a worst, the mean slowdown by 2 %), a row
named the primary's + "-zp" with modes = 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS is printed, to
paste right before its primary row (the rule table's order: the first matching row wins).

With --g64 likewise for the samples of the fine-grained modes with groups of at most 64 (the
table now: a zero-point sample takes its row's "-zp" class where there is one): rows named the
primary's + "-g64" with group_max = 64, to paste right before the primary row and its "-zp" row.
"""
import collections, csv, math, os, re, sys

FAMILY = {'W4A16_FAMILY_GEMV': 'gemv', 'W4A16_FAMILY_SM80': 'sm80', 'W4A16_FAMILY_SM90': 'sm90'}
FAM_C = {v: k for k, v in FAMILY.items()}


def table_rows(path):
    """(name, fields after the name in w4a16_heuristic_rule's order) of the h100-* rows of a rules
    file (heuristics/rules.tsv): integers (an empty cell is 0), family as its C enumerator."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from generator import rules
    lines = [l for l in open(path).read().splitlines() if l and not l.startswith('#')]
    header = lines[0].split('\t')
    kinds = dict(rules.FIELDS)
    for line in lines[1:]:
        cells = dict(zip(header, line.split('\t')))
        if not cells['name'].startswith('h100-'):
            continue
        v = []
        for field, _ in rules.FIELDS[1:]:
            cell = cells[field]
            if kinds[field] == 'family':
                v.append(rules.FAMILIES[cell])
            elif re.fullmatch(r'-?\d+', cell) or cell == '':
                v.append(int(cell or 0))
            else:
                v.append(cell)
        yield cells['name'], v


def primary_rows(path):
    rows = []
    zp, zp_of = None, None  # the "-zp" row before the next primary row
    for name, v in table_rows(path):
        if name.endswith('-g64') or name.endswith('-f16'):  # a group-size or dtype row: not a primary class
            continue
        m0, m1, n0, n1, k0, k1 = v[0:6]
        cls = (FAMILY[v[10]], v[13], v[11], v[19], v[15])  # family, tile_n, tile_m, tile_k, stages (0 = any)
        if name.endswith('-zp') or name.endswith('-zp-pc'):  # zero points (and per-column scales)
            zp, zp_of = cls, name[:name.rindex('-zp')]
            continue
        if name.endswith('-alt'):
            rows[-1]['alt'] = cls
            continue
        if re.search(r'-alt\d$', name):  # a further alternate (tools/fit_heuristic.py --extra)
            continue
        rows.append(dict(name=name, m=(m0, m1), n=(n0, n1), k=(k0, k1), sm=v[6], cc=v[8], cls=cls, alt=None,
                         zp=zp if zp_of == name else None))
        zp = None
    return rows


def inside(x, lo_hi):
    lo, hi = lo_hi
    return x >= lo and (hi == 0 or x <= hi)


def cls_of(r):
    return (r['family'], int(r['tile_n']), int(r['tile_m']), int(r['tile_k']))


def member(r, c):
    # a row's tile_k 0 (any) holds every tile_k of its family, tile_n and tile_m
    k = cls_of(r)
    return (k == c[:4] or (c[3] == 0 and k[:3] == c[:3])) and (c[4] == 0 or int(r['stages']) == c[4])


def classes_of(r):
    return {cls_of(r) + (0,), cls_of(r) + (int(r['stages']),)}


def ctime(rs, c):
    mem = [r for r in rs if member(r, c)]
    if not mem:
        return None
    return float(min(mem, key=lambda r: (float(r['heur_est_us']), -int(r['stages']), r['kernel']))['median_us'])


def score_of(rat):
    return max(rat) * 10 + sum(math.log(x) for x in rat)


def clearly_better(new, now):
    """new slowdowns beat now's: the worst lower by more than 3 %, or at no worse a worst the mean
    log slowdown lower by 0.02 (the test for replacing a row's class)"""
    mlog = lambda r: sum(math.log(x) for x in r) / len(r)
    return max(new) < max(now) * 0.97 or (max(new) <= max(now) and mlog(new) < mlog(now) - 0.02)


def row_text(w, c, suffix, modes='', group_max=0):
    (m0, m1), (n0, n1), (k0, k1) = w['m'], w['n'], w['k']
    return ('    {"%s%s", %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %s, %d, %d, %d, %d, %d, %d, 0, 0.0f, %d, %d, %s, %d, 0, 0, 0, 0, 0, 0, 0, 0},' %
            (w['name'], suffix, m0, m1, n0, n1, k0, k1, w['sm'], w['sm'], w['cc'], w['cc'], FAM_C[c[0]], c[2], c[2],
             c[1], c[1], c[4], c[4], c[3], c[3], modes or '0', group_max))


def in_row(p, w):
    return inside(p[0], w['m']) and inside(p[1], w['n']) and inside(p[2], w['k'])


def best_class(ps, prob, best):
    """The best-scoring class over samples ps among those present in most of them; returns the
    class, how many samples it covers, and its slowdowns against the profiled best."""
    count = collections.Counter(c for p in ps for c in set().union(*[classes_of(r) for r in prob[p]]))
    most = max(count.values())

    def rats(c):
        return [ctime(prob[p], c) / best[p] for p in ps if ctime(prob[p], c)]

    c = min((c for c, n in count.items() if n == most), key=lambda c: (score_of(rats(c)), c[4] != 0, c))
    return c, most, rats(c)


def fit_keyed(prim, prob, best, key):
    """key 'zp': the zero-point samples; 'g64': the fine-grained samples of groups <= 64."""
    def keyed(r):
        if key == 'zp':
            return r['mode'] == 'fgsz'
        return r['mode'] in ('fgs', 'fgsz') and int(r['group']) <= 64

    for w in prim:
        ps = [p for p, rs in prob.items() if keyed(rs[0]) and in_row(p, w)]
        if not ps:
            continue
        now = []
        for p in ps:
            zp = key == 'g64' and prob[p][0]['mode'] == 'fgsz' and w['zp'] and ctime(prob[p], w['zp'])
            t = zp or ctime(prob[p], w['cls']) or (w['alt'] and ctime(prob[p], w['alt']))
            if not t:
                t = min(float(r['median_us']) for r in prob[p] if r['heur_rank'] == '1')
            now.append(t / best[p])
        c, most, new = best_class(ps, prob, best)
        better = clearly_better(new, now)
        print('// %s: %d %s samples, now %s (worst %.2f), %s covers %d: %s (worst %.2f)%s' %
              (w['name'], len(ps), key, ' '.join('%.2f' % x for x in now), max(now), c, most,
               ' '.join('%.2f' % x for x in new), max(new), '' if better else ' - kept'))
        if better and c != w['cls']:
            if key == 'zp':
                print(row_text(w, c, '-zp', '1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS'))
            else:
                print(row_text(w, c, '-g64', group_max=64))


def main(argv):
    key = argv[1][2:] if len(argv) > 1 and argv[1] in ('--zp', '--g64') else None
    if key:
        argv = argv[:1] + argv[2:]
    if len(argv) < 3:
        sys.exit(__doc__)
    prim = primary_rows(argv[1])
    prob = collections.defaultdict(list)
    for run, path in enumerate(argv[2:]):
        for r in csv.DictReader((l for l in open(path) if not l.startswith('#')), delimiter='\t'):
            if r['status'] == 'W4A16_STATUS_OK':
                prob[(int(r['m']), int(r['n']), int(r['k']), run)].append(r)
    best = {p: min(float(r['median_us']) for r in rs) for p, rs in prob.items()}
    if key:
        return fit_keyed(prim, prob, best, key)
    uncovered = collections.defaultdict(list)
    for p, rs in prob.items():
        row = next((w for w in prim if in_row(p, w)), None)
        if row and not any(member(r, row['cls']) for r in rs):
            uncovered[row['name']].append(p)
    for w in prim:
        ps = uncovered.get(w['name'])
        if not ps:
            continue
        c, most, rat = best_class(ps, prob, best)
        print('// %s: %d uncovered samples, %s covers %d: %s' % (w['name'], len(ps), c, most,
                                                             ' '.join('%.2f' % x for x in rat)))
        if w['alt'] and c != w['alt']:
            # keep the row's present alternate class unless the new one covers every sample and is
            # clearly better (as for the "-zp" / "-g64" rows)
            now = [ctime(prob[p], w['alt']) for p in ps]
            if all(now) and most == len(ps):
                now = [t / best[p] for t, p in zip(now, ps)]
                if not clearly_better(rat, now):
                    print('//   kept %s: %s' % (w['alt'], ' '.join('%.2f' % x for x in now)))
                    continue
            elif all(now):
                print('//   kept %s (the new class misses some samples): %s' %
                      (w['alt'], ' '.join('%.2f' % (t / best[p]) for t, p in zip(now, ps))))
                continue
        print(row_text(w, c, '-alt'))


if __name__ == '__main__':
    main(sys.argv)

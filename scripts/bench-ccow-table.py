#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Render the CCoW micro-benchmark table from the result files of one
kernel (bench/results/ccow/<kernel>/*.txt, one guest run each; see
scripts/guest/bench-ccow.sh).

  bench-ccow-table.py [--figures DIR] RESULTS_DIR
  bench-ccow-table.py --redis RESULTS_DIR   (scripts/bench.sh ccow-redis)

Per zipfian exponent and configuration, medians over runs (and over the
forks of a run that had their whole interval):
- throughput: the parent's writes per second over the run, relative to
  plain CoW at the same exponent (1.000: as fast as CoW);
- dip: the lowest 100 ms tick of the second after a fork, over the second
  before it;
- recovery: ms from the fork until three ticks in a row are at 90% of the
  second before it (n/r: not within the fork's interval);
- faults: the parent's minor faults per fork interval;
- extra memory: the most the cgroup's memory rose above its level at the
  fork, in MiB;
- unnecessary pre-copies: pre-copied pages freed unwritten over pages
  pre-copied, from memory.htmm_stat.
With --redis, the Redis snapshot table: YCSB workload A's operations per
second relative to plain CoW, snapshots finished, the most the server's
cgroup rose above its level after the load (MiB), pre-copies and the
share of them never written (with 1000 pre-copies or more: pre-copies of
the load phase freed during the run count as unused then); medians over
runs.
With --figures, one figure per exponent: throughput over the time around
a fork, averaged over forks and runs, relative to the second before the
fork, a line per configuration.
"""
import argparse
import glob
import os
import statistics
import subprocess

ORDER = ['cow', 'cow-thp', 'ccow-t0', 'ccow-t50', 'ccow-t80', 'ccow-t90',
         'ccow-huge-t0', 'ccow-huge-t80', 'ccow-bounded', 'ccow-bounded-t0']
TICK_MS = 100


def parse(path):
    """Yield (alpha, config, run dict) for each benchmark run of a file."""
    hdr = {}
    cur = None
    for line in open(path):
        w = line.split()
        if not w:
            continue
        if w[:2] == ['bench', 'ccow']:
            hdr = dict(zip(w[2::2], (int(x) for x in w[3::2])))
        elif w[:2] == ['###', 'run']:
            if cur:
                yield cur['alpha'], cur['config'], cur
            cur = {'alpha': w[2], 'config': w[3], 'ticks': {}, 'forks': [],
                   'stat': {}, 'exit': None, 'hdr': hdr}
        elif cur is None:
            continue
        elif w[0] == 'tick':
            cur['ticks'][int(w[1])] = int(w[2])
        elif w[0] == 'fork':
            d = dict(zip(w[2::2], w[3::2]))
            cur['forks'].append({k: float(v) for k, v in d.items()})
        elif w[0] == 'total':
            cur['wps'] = float(w[2])
        elif w[0] == 'stat':
            cur['stat'][w[1]] = int(w[2])
        elif w[:2] == ['###', 'exit']:
            cur['exit'] = int(w[2])
        elif w[:2] == ['###', 'done']:
            break
    if cur:
        yield cur['alpha'], cur['config'], cur


def full_forks(run):
    """The forks whose whole interval ran."""
    h = run['hdr']
    end = h.get('seconds', 0) * 1000
    return [f for f in run['forks']
            if f['at_ms'] + h.get('fork_every', 0) * 1000 <= end]


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(v, f='%.3f'):
    return '—' if v is None else f % v


def table(runs):
    alphas = sorted({a for a, _ in runs})
    cfgs = [c for c in ORDER if any(k[1] == c for k in runs)]
    print('| α | configuration | runs | throughput vs CoW | dip after fork | '
          'recovery ms | faults per fork | extra memory MiB | pre-copied pages | '
          'unnecessary pre-copies |')
    print('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    for a in alphas:
        base = med([r['wps'] for r in runs.get((a, 'cow'), []) if 'wps' in r])
        for c in cfgs:
            rs = [r for r in runs.get((a, c), []) if 'wps' in r and r['exit'] == 0]
            if not rs:
                continue
            forks = [f for r in rs for f in full_forks(r)]
            wps = med([r['wps'] for r in rs])
            rec = [f['recover_ms'] for f in forks]
            never = sum(1 for x in rec if x < 0)
            rec_s = fmt(med([x for x in rec if x >= 0]), '%.0f')
            if never:
                rec_s += ' (n/r %d of %d)' % (never, len(rec))
            pre = med([r['stat'].get('ccow_precopied', 0) for r in rs])
            unused = [r['stat'].get('ccow_precopy_unused', 0) /
                      r['stat']['ccow_precopied']
                      for r in rs if r['stat'].get('ccow_precopied')]
            print('| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |' % (
                a, c, len(rs), fmt(wps / base if base and wps else None),
                fmt(med([f['dip'] for f in forks])), rec_s,
                fmt(med([f['minflt'] for f in forks]), '%.0f'),
                fmt(med([f['mem_extra_kb'] / 1024 for f in forks]), '%.1f'),
                fmt(pre, '%.0f'),
                fmt(med(unused) * 100 if unused else None, '%.1f%%')))
    return alphas, cfgs


def curve(rs):
    """Mean throughput per tick from 1 s before to the end of a fork's
    interval, relative to the second before the fork."""
    acc = {}
    for r in rs:
        for f in full_forks(r):
            at, pre = int(f['at_ms']), f['pre_wps']
            if not pre:
                continue
            span = r['hdr']['fork_every'] * 1000
            for t in range(at - 1000, at + span, TICK_MS):
                if t in r['ticks']:
                    acc.setdefault(t - at, []).append(
                        r['ticks'][t] * (1000 / TICK_MS) / pre)
    return sorted((t, sum(v) / len(v)) for t, v in acc.items())


def figures(d, runs, alphas, cfgs):
    os.makedirs(d, exist_ok=True)
    for a in alphas:
        dat = os.path.join(d, 'ccow-%s.dat' % a)
        used = []
        with open(dat, 'w') as f:
            for c in cfgs:
                pts = curve([r for r in runs.get((a, c), []) if r['exit'] == 0])
                if not pts:
                    continue
                used.append(c)
                f.write('# %s\n' % c)
                for t, v in pts:
                    f.write('%.1f %.4f\n' % (t / 1000, v))
                f.write('\n\n')
        png = os.path.join(d, 'ccow-alpha%s.png' % a)
        plots = ', '.join("'%s' index %d using 1:2 with lines title '%s'"
                          % (dat, i, c) for i, c in enumerate(used))
        script = ("set terminal pngcairo size 800,450 noenhanced; set output '%s'; "
                  "set title 'CCoW micro-benchmark, zipfian alpha %s: writes around a fork'; "
                  "set xlabel 'seconds since the fork'; "
                  "set ylabel 'throughput / before the fork'; set yrange [0:1.3]; "
                  "set key bottom right; set grid; plot %s" % (png, a, plots))
        subprocess.run(['gnuplot', '-e', script], check=True)
        os.remove(dat)
        print('figure: %s' % png)


REDIS_ORDER = ['cow', 'cow-thp', 'ccow-t0', 'ccow-t50', 'ccow-t80', 'ccow-t90',
               'ccow-huge-t0']


def parse_redis(path):
    """Yield (config, run dict) for each Redis run of a file."""
    cur = None
    for line in open(path):
        w = line.split()
        if w[:2] == ['###', 'run'] and len(w) > 3:
            if cur:
                yield cur['config'], cur
            cur = {'config': w[3], 'stat': {}, 'exit': None}
        elif cur is None or not w:
            continue
        elif w[:3] == ['wl', 'result', 'phase']:
            cur['ops_s'] = float(w[w.index('ops_per_s') + 1])
        elif w[:2] == ['wl', 'check']:
            cur['check'] = w[2]
        elif w[0] == 'snapshots':
            cur['snapshots'] = int(w[1])
        elif w[0] == 'mem_extra_kb':
            cur['extra_mb'] = int(w[1]) / 1024
        elif w[0] == 'stat':
            cur['stat'][w[1]] = int(w[2])
        elif w[:2] == ['###', 'exit']:
            cur['exit'] = int(w[2])
    if cur:
        yield cur['config'], cur


def redis_table(d):
    runs = {}
    files = sorted(glob.glob(os.path.join(d, '*.txt')))
    for p in files:
        for c, r in parse_redis(p):
            if r['exit'] == 0 and r.get('check') == 'ok' and 'ops_s' in r:
                runs.setdefault(c, []).append(r)
    print('Redis snapshots, kernel %s, %d guest runs' %
          (os.path.basename(os.path.normpath(d)), len(files)))
    print('| configuration | runs | ops/s | vs CoW | snapshots | extra memory MiB | '
          'pre-copied pages | unnecessary pre-copies |')
    print('| --- | --- | --- | --- | --- | --- | --- | --- |')
    base = med([r['ops_s'] for r in runs.get('cow', [])])
    for c in [c for c in REDIS_ORDER if c in runs]:
        rs = runs[c]
        ops = med([r['ops_s'] for r in rs])
        # Below 1000 pre-copies, those of the load phase freed during the
        # run (counted then) would make the share meaningless.
        unused = [r['stat'].get('ccow_precopy_unused', 0) / r['stat']['ccow_precopied']
                  for r in rs if r['stat'].get('ccow_precopied', 0) >= 1000]
        print('| %s | %d | %.0f | %s | %s | %s | %s | %s |' % (
            c, len(rs), ops, fmt(ops / base if base else None),
            fmt(med([r.get('snapshots', 0) for r in rs]), '%.0f'),
            fmt(med([r.get('extra_mb', 0) for r in rs]), '%.1f'),
            fmt(med([r['stat'].get('ccow_precopied', 0) for r in rs]), '%.0f'),
            fmt(med(unused) * 100 if unused else None, '%.1f%%')))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--figures')
    ap.add_argument('--redis', action='store_true')
    ap.add_argument('dir')
    a = ap.parse_args()
    if a.redis:
        redis_table(a.dir)
        return
    runs = {}
    files = sorted(glob.glob(os.path.join(a.dir, '*.txt')))
    for p in files:
        for alpha, cfg, r in parse(p):
            runs.setdefault((alpha, cfg), []).append(r)
    kernel = os.path.basename(os.path.normpath(a.dir))
    print('CCoW micro-benchmark, kernel %s, %d guest runs' % (kernel, len(files)))
    alphas, cfgs = table(runs)
    if a.figures:
        figures(a.figures, runs, alphas, cfgs)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The workloads benchmark's results (scripts/bench-workloads.sh).

  bench-workloads-table.py csv --kernel ID --out DIR [--plugin FILE]
                           [--guest-exit RC] RESULTS.log
      one CSV file per run of the guest's output (bench-workloads.sh),
      named WORKLOAD.CONFIG.rRATIO-TIME.csv; --plugin adds the plugin's
      window figures (one run per guest then)
  bench-workloads-table.py render [--time model|model-sum|wall]
                           [--figures DIR] [--peers PDIR]... DIR
      the tables in Markdown from every CSV file of DIR (medians where a
      cell has several runs) and, with --figures, one gnuplot figure per
      workload: performance against the ratio, a line per configuration;
      with --peers, the cells of the configurations that do not run htmm
      (all-fast, none, autonuma, damon) that DIR lacks come from PDIR, a
      kernel that differs only in htmm's own code (WL_PEERS in
      bench-workloads.sh); repeated, the first PDIR that has a cell
      gives it

Performance is the all-fast run's time divided by the run's (1.0: as fast
as all-fast).  Time is the plugin's modelled time of the measured phase on
the workload's CPU, vCPU 0, where the guest pins it (--time model, the
default: kernel threads run on the other vCPU, as on a machine with spare
cores, and their CPU is reported apart), the sum over all vCPUs (--time
model-sum, as if one core did everything), or the wall-clock time (--time
wall, for the quick mode, which has no plugin).
"""
import argparse
import csv
import datetime
import math
import os
import statistics
import subprocess
import sys

FIELDS = ['workload', 'config', 'ratio', 'mb', 'work', 'budget_kb', 'kernel',
          'date', 'guest_exit', 'exit', 'check', 'wall_s', 'model_ns_cpu0',
          'insns_cpu0', 'model_ns', 'insns', 'left_out_insns',
          'left_out_insns_cpu0', 'fast_misses',
          'slow_misses', 'fast_share', 'rss_begin_kb', 'rss_end_kb',
          'n0_begin_kb', 'n1_begin_kb', 'n0_end_kb', 'n1_end_kb',
          'thp_begin_kb', 'thp_end_kb', 'migrated', 'promoted', 'demoted',
          'ksamplingd_ms_s', 'kmigraterd_ms_s', 'kdamond_ms_s', 'kswapd_ms_s',
          'filler_free_kb', 'boost_kb_filler', 'boost_kb_end',
          'node0_free_end_kb', 'fast_misses_cpu0', 'slow_misses_cpu0',
          'fast_share_cpu0', 'pinned_cpu1', 'result']
CONFIGS = ['all-fast', 'none', 'autonuma', 'damon', 'htmm-abit', 'htmm-epebs',
           'htmm-epebs-nosplit']
WORKLOADS = ['redis', 'xslookup', 'graph500', 'btree', 'liblinear', 'pagerank']
# The reproduction's figures at 1:8 (issue text): performance relative to
# all-local, as shown there or as all-local time / time for "+N% time".
MEMTIS_1_8 = {'redis': ('86–91%', 0.885), 'xslookup': ('66%', 0.66),
              'graph500': ('89%', 0.89), 'btree': ('+10% time', 1 / 1.10),
              'liblinear': ('+6% time', 1 / 1.06),
              'pagerank': ('+13% time', 1 / 1.13)}
NAMES = {'redis': 'YCSB on Redis', 'xslookup': 'XS lookup (XSBench-style)',
         'graph500': 'Graph500 BFS', 'btree': 'B-tree (SQLite)',
         'liblinear': 'liblinear', 'pagerank': 'PageRank (igraph)'}


def read_plugin(path):
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and w[0] == 'window':
                out['fast_misses'], out['slow_misses'] = int(w[2]), int(w[4])
                out['insns'], out['model_ns'] = int(w[6]), int(float(w[8]))
                # The relay's own work (epebs), not in insns or model_ns.
                if len(w) >= 11 and w[9] == 'left_out_insns':
                    out['left_out_insns'] = int(w[10])
                tot = out['fast_misses'] + out['slow_misses']
                out['fast_share'] = '%.4f' % (out['fast_misses'] / tot) if tot else ''
            elif w[:2] == ['vcpu', '0'] and len(w) >= 10:
                # The workload's CPU (the guest pins it to CPU 0).
                out['insns_cpu0'], out['model_ns_cpu0'] = int(w[7]), int(float(w[9]))
                # fast_share counts every vCPU: the kernel threads' scans
                # and migration copies too.  This is the workload's CPU.
                f0, s0 = int(w[3]), int(w[5])
                out['fast_misses_cpu0'], out['slow_misses_cpu0'] = f0, s0
                out['fast_share_cpu0'] = '%.4f' % (f0 / (f0 + s0)) if f0 + s0 else ''
                # What the relay left out on that CPU: where it ran.
                if len(w) >= 12 and w[10] == 'left_out_insns':
                    out['left_out_insns_cpu0'] = int(w[11])
    return out


def parse_run(lines, filler_free):
    r = {'filler_free_kb': filler_free, 'result': '', 'check': 'missing'}
    h = lines[0].split()
    for k, v in zip(h[2::2], h[3::2]):
        r[{'workload': 'workload', 'config': 'config'}.get(k, k)] = v
    cpu, mig = {}, {}
    unpinned = False
    for line in lines[1:]:
        w = line.split()
        if len(w) < 2:
            continue
        if w[1] == 'exit':
            r['exit'] = w[2]
        elif w[1] in ('nodes_begin_kb', 'nodes_end_kb') and len(w) == 4:
            p = 'begin' if 'begin' in w[1] else 'end'
            r['n0_%s_kb' % p], r['n1_%s_kb' % p] = w[2], w[3]
        elif w[1] in ('thp_begin_kb', 'thp_end_kb') and len(w) == 3:
            r[w[1]] = w[2]
        elif w[1] == 'wl' and w[2] == 'begin':
            r['rss_begin_kb'] = w[4]
        elif w[1] == 'wl' and w[2] == 'end':
            r['wall_s'], r['rss_end_kb'] = w[4], w[6]
        elif w[1] == 'wl' and w[2] == 'result':
            r['result'] = (r['result'] + '; ' if r['result'] else '') + ' '.join(w[3:])
        elif w[1] == 'wl' and w[2] == 'check':
            r['check'] = w[3]
        elif w[1] == 'vmstat':
            mig[w[2]] = int(w[3])
        elif w[1] == 'cpu_ms':
            cpu[w[2]] = int(w[3])
        elif w[1] == 'boost_kb' and len(w) == 4:
            # Node 0's watermark boost at the filler's start and the end.
            r['boost_kb_filler'], r['boost_kb_end'] = w[2], w[3]
        elif w[1] == 'node0_free_end_kb' and len(w) == 3:
            r['node0_free_end_kb'] = w[2]
        elif w[1] == 'pinned_cpu1':
            # The tiering systems' threads the guest pinned to CPU 1 (the
            # last line: the measured phase's).
            r['pinned_cpu1'] = ' '.join(w[2:])
        elif w[1] in ('pin', 'pin:'):
            unpinned = True
    if unpinned:
        # A thread of the configuration stayed free to run on the
        # workload's CPU: not the method, so not a cell of the table.
        r['check'] = 'unpinned'
    r['migrated'] = mig.get('pgmigrate_success', '')
    # htmm counts each promotion in both htmm_nr_promoted and
    # pgpromote_success (where NUMA-balancing tiering counts its own);
    # NUMA balancing moves only the latter.  So the larger of the two is
    # the pages promoted.  Demotions: reclaim's in pgdemote_*, htmm's
    # only in htmm_nr_demoted.
    r['promoted'] = max(mig.get('pgpromote_success', 0), mig.get('htmm_nr_promoted', 0))
    r['demoted'] = sum(v for k, v in mig.items() if k.startswith('pgdemote_')) + \
        mig.get('htmm_nr_demoted', 0)
    secs = float(r.get('wall_s') or 0)
    for t in ('ksamplingd', 'kmigraterd', 'kdamond', 'kswapd'):
        if t in cpu and secs > 0:
            r[t + '_ms_s'] = '%.1f' % (cpu[t] / secs)
    return r


def do_csv(a):
    with open(a.log, errors='replace') as f:
        lines = [l.rstrip('\r\n').replace('\r', '') for l in f]
    lines = [l[2:] if l.startswith('# bench') else l for l in lines]
    runs, cur, filler = [], None, ''
    for line in lines:
        w = line.split()
        if line.startswith('bench filler') and 'free_kb' in w:
            filler = w[w.index('free_kb') + 1]
        if line.startswith('bench run workload'):
            cur = [line]
        elif cur is not None:
            cur.append(line)
            if line.startswith('bench run end'):
                runs.append(cur)
                cur = None
    if cur is not None:
        runs.append(cur)
    if not runs:
        sys.exit('no run in %s' % a.log)
    plugin = read_plugin(a.plugin) if len(runs) == 1 else {}
    now = datetime.datetime.now(datetime.timezone.utc)
    os.makedirs(a.out, exist_ok=True)
    for i, lines in enumerate(runs):
        r = parse_run(lines, filler)
        r.update(plugin)
        r['kernel'], r['guest_exit'] = a.kernel, a.guest_exit
        r['date'] = now.strftime('%Y-%m-%dT%H:%M:%SZ')
        name = '%s.%s.r%s-%s%02d.csv' % (r['workload'], r['config'], r['ratio'],
                                         now.strftime('%Y%m%d%H%M%S'), i)
        # The guest's clock follows the host's TSC under TCG; once, a
        # measured phase of about 2 minutes read 25041 s.  Such a run's
        # guest-time figures (and the timers its kernel ran by) are wrong:
        # keep it apart (not *.csv, so the cell runs again).
        if a.host_seconds and float(r.get('wall_s') or 0) > a.host_seconds:
            name += '.rejected'
            print('warning: %s: the measured phase took %s s of guest time, '
                  'the whole guest %.0f s on the host: clock jump, run kept '
                  'as %s' % (a.log, r['wall_s'], a.host_seconds, name),
                  file=sys.stderr)
        # A diagnosis run (traced, or with tunables of its own) is not a
        # cell of the table: kept apart as well, and the cell runs anyway.
        elif any(l.startswith(('bench trace', 'bench htmm_set', 'bench irq_cpus')) for l in lines):
            name += '.diag'
            print('%s: a diagnosis run (bench_trace, bench_htmm_set or bench_irq_cpus), kept '
                  'as %s, out of the table' % (a.log, name), file=sys.stderr)
        with open(os.path.join(a.out, name), 'w', newline='') as f:
            wr = csv.DictWriter(f, FIELDS, extrasaction='ignore')
            wr.writeheader()
            wr.writerow(r)
        print(os.path.join(a.out, name))


def load(d):
    rows = []
    for n in sorted(os.listdir(d)):
        if n.endswith('.csv'):
            with open(os.path.join(d, n)) as f:
                rows += list(csv.DictReader(f))
    return rows


def load_peers(rows, d):
    """The runs of @d whose cells (no htmm configuration) @rows lacks."""
    have = {key_of(r) for r in rows}
    return [r for r in load(d)
            if not r['config'].startswith('htmm') and key_of(r) not in have]


def med(vals):
    vals = [float(v) for v in vals if v not in ('', None)]
    return statistics.median(vals) if vals else None


def key_of(r):
    """A run's cell; all-fast has no ratio (its budget does not apply)."""
    ratio = 0 if r['config'] == 'all-fast' else int(r['ratio'])
    return (r['workload'], r['config'], ratio)


def cells(rows, key):
    """{(workload, config, ratio): median of key} over the runs that passed."""
    g = {}
    for r in rows:
        if r['check'] != 'ok' or r.get('exit') != '0':
            continue
        g.setdefault(key_of(r), []).append(r.get(key))
    return {k: med(v) for k, v in g.items()}


def perf_table(rows, tkey):
    t = cells(rows, tkey)
    perf = {}
    for (w, c, ratio), v in t.items():
        base = t.get((w, 'all-fast', 0))
        if c != 'all-fast' and base and v:
            perf[(w, c, ratio)] = base / v
    return perf


def fmt(v, f='%.3f'):
    return '—' if v is None else f % v


def render(a):
    rows = load(a.dir)
    for d in a.peers:
        rows += load_peers(rows, d)
    if not rows:
        sys.exit('no results in %s' % a.dir)
    tkey = {'model': 'model_ns_cpu0', 'model-sum': 'model_ns',
            'wall': 'wall_s'}[a.time]
    if tkey == 'model_ns_cpu0' and any(not r.get(tkey) for r in rows):
        # Results of before the per-CPU figures: the sum of all vCPUs.
        print('note: runs without per-CPU figures; time is the sum of all vCPUs')
        tkey = 'model_ns'
    perf = perf_table(rows, tkey)
    ratios = sorted({k[2] for k in perf})
    wls = [w for w in WORKLOADS if any(k[0] == w for k in perf)]
    cfgs = [c for c in CONFIGS if any(k[1] == c for k in perf)]
    kernels = sorted({'%s (%s)' % (k, ', '.join(sorted(
        {r['config'] for r in rows if r['kernel'] == k})))
        for k in {r['kernel'] for r in rows}})
    n = {}
    for r in rows:
        k = key_of(r)
        n[k] = n.get(k, 0) + 1
    print('Kernel %s; time: %s; %d runs; performance = all-fast time / time'
          % (', '.join(kernels), {'model_ns_cpu0': 'modelled, workload CPU',
                                  'model_ns': 'modelled, sum of all vCPUs',
                                  'wall_s': 'wall clock'}[tkey], len(rows)))
    failed = [r for r in rows if r['check'] != 'ok' or r.get('exit') != '0']
    for r in failed:
        print('FAILED run: %s %s 1:%s (check %s, exit %s)' % (
            r['workload'], r['config'], r['ratio'], r['check'], r.get('exit')))
    print()
    print('| workload | configuration | ' + ' | '.join('1:%d' % x for x in ratios) + ' |')
    print('|---|---|' + '---|' * len(ratios))
    for w in wls:
        for c in cfgs:
            print('| %s | %s | ' % (NAMES[w], c) + ' | '.join(
                fmt(perf.get((w, c, x))) for x in ratios) + ' |')
    for c in cfgs:
        gm = []
        for x in ratios:
            v = [perf[(w, c, x)] for w in wls if (w, c, x) in perf]
            gm.append(math.exp(sum(map(math.log, v)) / len(v)) if len(v) == len(wls) else None)
        print('| geometric mean | %s | ' % c + ' | '.join(fmt(v) for v in gm) + ' |')
    if 8 in ratios:
        compare_1_8(perf, wls, cfgs)
    detail(rows, perf, wls, cfgs, ratios, n)
    if a.figures:
        figures(a.figures, perf, wls, cfgs, ratios)


def compare_1_8(perf, wls, cfgs):
    """Our 1:8 column next to the reproduction's: a comparison of shape."""
    peers = [c for c in cfgs if not c.startswith('htmm')]
    ours = [c for c in cfgs if c.startswith('htmm')]
    print()
    print('| workload | MEMTIS reproduction at 1:8 | as performance | ' +
          ''.join('%s | ' % c for c in ours) + 'best peer |')
    print('|---|---|---|' + '---|' * len(ours) + '---|')
    for w in wls:
        shown, value = MEMTIS_1_8[w]
        best = max(((perf[(w, c, 8)], c) for c in peers if (w, c, 8) in perf),
                   default=None)
        print('| %s | %s | %.3f | ' % (NAMES[w], shown, value) + ''.join(
            '%s | ' % fmt(perf.get((w, c, 8))) for c in ours) + '%s |' % (
            '%.3f (%s)' % best if best else '—'))


def detail(rows, perf, wls, cfgs, ratios, n):
    share, mig = cells(rows, 'fast_share'), cells(rows, 'migrated')
    share0 = cells(rows, 'fast_share_cpu0')
    ks, km = cells(rows, 'ksamplingd_ms_s'), cells(rows, 'kmigraterd_ms_s')
    kd, kw = cells(rows, 'kdamond_ms_s'), cells(rows, 'kswapd_ms_s')
    print()
    print('| workload | configuration | ratio | runs | performance | fast share of '
          'accesses, all vCPUs | ... workload CPU | pages migrated | '
          'ksamplingd ms/s | kmigraterd ms/s | kdamond ms/s | kswapd ms/s |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for w in wls:
        k0 = (w, 'all-fast', 0)
        print('| %s | all-fast | — | %d | 1.000 | %s | %s | %s | | | | |' % (
            NAMES[w], n.get(k0, 0), fmt(share.get(k0)), fmt(share0.get(k0)),
            fmt(mig.get(k0), '%.0f')))
        for x in ratios:
            for c in cfgs:
                k = (w, c, x)
                if k not in n:
                    continue
                print('| %s | %s | 1:%d | %d | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                    NAMES[w], c, x, n[k], fmt(perf.get(k)), fmt(share.get(k)),
                    fmt(share0.get(k)), fmt(mig.get(k), '%.0f'), fmt(ks.get(k), '%.1f'),
                    fmt(km.get(k), '%.1f'), fmt(kd.get(k), '%.1f'),
                    fmt(kw.get(k), '%.1f')))


def figures(d, perf, wls, cfgs, ratios):
    os.makedirs(d, exist_ok=True)
    for w in wls:
        dat = os.path.join(d, 'workloads-%s.dat' % w)
        with open(dat, 'w') as f:
            for c in cfgs:
                f.write('# %s\n' % c)
                for x in ratios:
                    if (w, c, x) in perf:
                        f.write('%d %.4f\n' % (x, perf[(w, c, x)]))
                f.write('\n\n')
        png = os.path.join(d, 'workloads-%s.png' % w)
        plots = ', '.join("'%s' index %d using 1:2 with linespoints title '%s'"
                          % (dat, i, c) for i, c in enumerate(cfgs))
        script = ("set terminal pngcairo size 800,400 noenhanced; set output '%s'; "
                  "set title '%s'; set logscale x 2; set xlabel 'fast:slow = 1:R'; "
                  "set ylabel 'performance relative to all-fast'; set yrange [0:1.1]; "
                  "set key outside right top; set grid; plot %s" % (png, NAMES[w], plots))
        subprocess.run(['gnuplot', '-e', script], check=True)
        os.remove(dat)
        print('figure: %s' % png)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='cmd', required=True)
    c = sub.add_parser('csv')
    c.add_argument('--kernel', required=True)
    c.add_argument('--out', required=True)
    c.add_argument('--plugin')
    c.add_argument('--guest-exit', default='0')
    c.add_argument('--host-seconds', type=float,
                   help="the guest's whole life, timed on the host")
    c.add_argument('log')
    r = sub.add_parser('render')
    r.add_argument('--time', choices=['model', 'model-sum', 'wall'],
                   default='model')
    r.add_argument('--figures')
    r.add_argument('--peers', action='append', default=[])
    r.add_argument('dir')
    a = ap.parse_args()
    if a.cmd == 'csv':
        do_csv(a)
    else:
        render(a)


if __name__ == '__main__':
    main()

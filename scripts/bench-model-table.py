#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Render the model benchmark (scripts/bench.sh model) from DIR/*.txt.

Each file is one guest: mode (plain, plugin, pebs), node, the probe's
line "epebs_probe: loads N seconds S ns_per_load X" (wall time in the
guest) and, under the plugin, its "window ... insns I model_ns T" line.
Per mode and node: the runs' wall ns per load (median, min-max), the
slowdown against plain TCG, the modelled ns per load, and its spread
over the runs; then the modelled node-1/node-0 ratio against the
declared 300/100 ns.
"""
import os
import re
import statistics
import sys


def parse(path):
    r = {}
    with open(path, errors='replace') as f:
        for line in f:
            m = re.search(r'mode (\w+)', line)
            if line.startswith('# bench model') and m:
                r['mode'] = m.group(1)
            m = re.match(r'bench model node (\d+)', line)
            if m:
                r['node'] = int(m.group(1))
            m = re.match(r'epebs_probe: loads (\d+) seconds ([\d.]+) ns_per_load ([\d.]+)', line)
            if m:
                r['loads'] = int(m.group(1))
                r['wall'] = float(m.group(3))
            m = re.match(r'plugin window fast (\d+) slow (\d+) insns (\d+) model_ns (\d+)', line)
            if m:
                r['fast'], r['slow'], r['insns'], r['model'] = map(int, m.groups())
            m = re.match(r'plugin pebs loads (\d+) .* dropped (\d+) pings (\d+) delay_us mean ([\d.]+) max ([\d.]+)', line)
            if m:
                r['samples'] = int(m.group(1))
                r['dropped'] = int(m.group(2))
                r['delay'] = (float(m.group(4)), float(m.group(5)))
    return r


def fmt(v, prec=1):
    if not v:
        return '-'
    return f'{statistics.median(v):.{prec}f} ({min(v):.{prec}f}-{max(v):.{prec}f})'


def main():
    d = sys.argv[1]
    runs = [parse(os.path.join(d, n)) for n in sorted(os.listdir(d)) if n.endswith('.txt')]
    runs = [r for r in runs if 'mode' in r and 'node' in r and 'loads' in r]
    by = {}
    for r in runs:
        by.setdefault((r['mode'], r['node']), []).append(r)
    plain = {n: statistics.median([r['wall'] for r in by.get(('plain', n), [])] or [0]) for n in (0, 1)}
    print('mode   | node | runs | wall ns/load (TCG) | vs plain | modelled ns/load | model spread % | samples/s | delay us mean (max)')
    print('-------+------+------+--------------------+----------+------------------+----------------+-----------+--------------------')
    model = {}
    for mode in ('plain', 'plugin', 'pebs'):
        for node in (0, 1):
            rs = by.get((mode, node), [])
            if not rs:
                continue
            wall = [r['wall'] for r in rs]
            mod = [r['model'] / r['loads'] for r in rs if 'model' in r]
            if mod:
                model.setdefault(mode, {})[node] = statistics.median(mod)
            spread = f'{(max(mod) - min(mod)) / statistics.median(mod) * 100:.2f}' if len(mod) > 1 else '-'
            slow = f'{statistics.median(wall) / plain[node]:.2f}x' if plain.get(node) else '-'
            sps = [r['samples'] / (r['loads'] * r['wall'] / 1e9) for r in rs if 'samples' in r and r['wall']]
            dl = [r['delay'] for r in rs if 'delay' in r]
            dls = f'{statistics.median([x[0] for x in dl]):.0f} ({max(x[1] for x in dl):.0f})' if dl else '-'
            print(f'{mode:6} | {node:4} | {len(rs):4} | {fmt(wall):18} | {slow:8} | {fmt(mod):16} | {spread:14} | '
                  f'{(f"{statistics.median(sps):.0f}" if sps else "-"):9} | {dls}')
    for mode, m in model.items():
        if 0 in m and 1 in m:
            print(f'{mode}: modelled node 1 / node 0 = {m[1] / m[0]:.3f} (declared latencies 300 / 100 = 3.000)')
    return 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Render the tenants benchmark's table from its result files.

    scripts/bench-tenants-table.py bench/results/tenants/<kernel>

Each file is one guest run of scripts/guest/bench-tenants.sh.  One row per
scenario and tenant: its effective budget on node 0 and hot data (MiB),
its goal (per cent of the hot data that fits the budget, at 95%), the
runs that reached it, and the seconds to it (median, min, max over the
runs).  Then per scenario the spread between the fastest and the slowest
tenant of a run (median, max over the runs that all four reached).
"""
import os
import re
import statistics
import sys

LINE = re.compile(r":(four_tenants\w*):(t\d): budget (\d+) KiB, hot (\d+) KiB, "
                  r"([\d.]+)% up, goal ([\d.]+)%, t95 (-?[\d.]+) s")


def parse(path):
    runs = {}
    for line in open(path, errors="replace"):
        m = LINE.search(line)
        if m:
            sc, t = m.group(1), m.group(2)
            runs.setdefault(sc, {})[t] = {
                "budget": int(m.group(3)) / 1024, "hot": int(m.group(4)) / 1024,
                "goal": float(m.group(6)), "t95": float(m.group(7))}
    return runs


def main(d):
    data = {}
    for f in sorted(os.listdir(d)):
        for sc, ts in parse(os.path.join(d, f)).items():
            data.setdefault(sc, []).append(ts)
    if not data:
        sys.exit(f"no tenants results in {d}")
    med = statistics.median
    print("scenario | tenant | budget MiB | hot MiB | goal % | runs at goal |"
          " t95 s median | min | max")
    print("--- | --- | --- | --- | --- | --- | --- | --- | ---")
    spreads = {}
    for sc, runs in sorted(data.items()):
        for t in sorted({t for r in runs for t in r}):
            rs = [r[t] for r in runs if t in r]
            ok = [x["t95"] for x in rs if x["t95"] >= 0]
            fig = f"{med(ok):.1f} | {min(ok):.1f} | {max(ok):.1f}" if ok else "never | | "
            print(f"{sc} | {t} | {med(x['budget'] for x in rs):.1f} |"
                  f" {rs[0]['hot']:.0f} | {med(x['goal'] for x in rs):.1f} |"
                  f" {len(ok)}/{len(rs)} | {fig}")
        spreads[sc] = [max(x["t95"] for x in r.values()) -
                       min(x["t95"] for x in r.values())
                       for r in runs if all(x["t95"] >= 0 for x in r.values())]
    print()
    print("scenario | runs | runs all at goal | spread s median | max")
    print("--- | --- | --- | --- | ---")
    for sc, sp in sorted(spreads.items()):
        fig = f"{med(sp):.1f} | {max(sp):.1f}" if sp else "- | -"
        print(f"{sc} | {len(data[sc])} | {len(sp)} | {fig}")


if __name__ == "__main__":
    main(sys.argv[1])

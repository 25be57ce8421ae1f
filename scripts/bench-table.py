#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise the tiering benchmark: one row per configuration.

Reads DIR/<config>-<run>.txt as written by scripts/guest/bench-tiering.sh
and DIR/<config>-gt<run>.plugin from the ground-truth plugin runs, and
prints the median and the spread (min-max) over the runs of each figure.
"""
import os
import re
import statistics
import sys

ORDER = ["none", "autonuma", "damon", "htmm-abit", "htmm-inject",
         "htmm-split", "htmm-nosplit", "ceiling"]
SCENARIOS = ["converge", "skewed", "uniform"]


def sort_key(name):
    """Run names are <config> or <scenario>.<config>."""
    scen, _, conf = name.rpartition(".")
    scen = scen or "converge"
    return (SCENARIOS.index(scen) if scen in SCENARIOS else 99,
            ORDER.index(conf) if conf in ORDER else 99)


def parse_run(path):
    run = {"t": {}, "ok": False}
    with open(path, errors="replace") as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "t" and len(w) >= 8:
                run["t"][int(w[1])] = (float(w[3]), int(w[7]))
            elif w[0] == "result":
                kv = dict(zip(w[1::2], w[2::2]))
                for k in ("t50", "t90", "t95", "final"):
                    run[k] = float(kv[k])
                run["migrated"] = int(kv["migrated"])
                fph = float(kv.get("fast_per_hot", "0"))
                run["fast_per_hot"] = fph if fph > 0 else None
            elif w[:2] == ["bench", "config"]:
                kv = dict(zip(w[3::2], w[4::2]))
                run["pages"] = (int(kv["cold"]) + int(kv["hot"])) * 256
                run["seconds"] = int(kv["seconds"])
            elif w[:2] == ["bench", "kthread_ms"]:
                run["kthread_ms"] = int(w[2])
            elif w[:2] == ["bench", "end"]:
                run["ok"] = True
    if not run["ok"] or "final" not in run:
        return None
    # Pages migrated in the last 10 s, per cent of the cgroup's pages.
    ts = sorted(run["t"])
    end = ts[-1]
    start = max((t for t in ts if t <= end - 10), default=ts[0])
    run["late"] = 100.0 * (run["t"][end][1] - run["t"][start][1]) / run["pages"]
    # Did it hold? The lowest share over the second half of the run.
    run["held"] = min(run["t"][t][0] for t in ts if t >= end / 2)
    return run


def parse_plugin(path):
    with open(path) as f:
        for line in f:
            m = re.match(r"window fast (\d+) slow (\d+)", line)
            if m:
                fast, slow = int(m.group(1)), int(m.group(2))
                return 100.0 * fast / max(1, fast + slow)
    return None


def fmt(values, unit="", prec=1):
    vals = [v for v in values if v is not None]
    if not vals:
        return "-"
    never = [v for v in vals if v < 0]
    good = sorted(v for v in vals if v >= 0)
    if len(never) * 2 >= len(vals):
        return "never"
    med = statistics.median(vals if not never else good + [float("inf")] * len(never))
    lo, hi = min(good), (max(good) if not never else float("inf"))
    hi_s = "never" if hi == float("inf") else f"{hi:.{prec}f}"
    return f"{med:.{prec}f}{unit} ({lo:.{prec}f}-{hi_s})"


def main():
    d = sys.argv[1]
    runs = {}
    gt = {}
    bad = []
    for name in sorted(os.listdir(d)):
        m = re.match(r"(.+)-gt\d+\.plugin$", name)
        if m:
            share = parse_plugin(os.path.join(d, name))
            if share is None:
                bad.append(name)
            else:
                gt.setdefault(m.group(1), []).append(share)
            continue
        m = re.match(r"(.+)-(\d+)\.txt$", name)
        if not m:
            continue
        r = parse_run(os.path.join(d, name))
        if r is None:
            bad.append(name)
            continue
        runs.setdefault(m.group(1), []).append(r)
    cols = ["config", "runs", "t50 s", "t90 s", "t95 s", "hot on node0 at end %",
            "lowest in 2nd half %",
            "migrated pages", "last 10 s migr. %", "kthread CPU ms",
            "fast MiB per hot MiB", "fast-node access share %"]
    rows = []
    for c in sorted(runs, key=sort_key):
        rs = runs[c]
        rows.append([c, str(len(rs)),
                     fmt([r["t50"] for r in rs]), fmt([r["t90"] for r in rs]),
                     fmt([r["t95"] for r in rs]), fmt([r["final"] for r in rs]),
                     fmt([r["held"] for r in rs]),
                     fmt([r["migrated"] for r in rs], prec=0),
                     fmt([r["late"] for r in rs], prec=2),
                     fmt([r["kthread_ms"] for r in rs], prec=0),
                     fmt([r["fast_per_hot"] for r in rs]),
                     fmt(gt.get(c, []))])
    widths = [max(len(x[i]) for x in rows + [cols]) for i in range(len(cols))]
    print("median (min-max) over runs; 'never': not reached in most runs")
    print(" | ".join(c.ljust(w) for c, w in zip(cols, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths)))
    for b in bad:
        print(f"incomplete run: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Render the scale benchmark's table from its result files.

    scripts/bench-scale-table.py bench/results/scale/<kernel>

One row per (cgroups, fast node size), the median over its runs: the CPU
of ksamplingd and of the kmigraterd threads per second of the run, the
pages moved, the LRU pages the demotion walks looked at per demoted page,
and the seconds each cgroup took to get 95% of its hot data to node 0
(median over the cgroups, then the slowest, and the spread between the
fastest and the slowest; "never" if one did not get there); and for the
last 10 s of the workloads (the steady state): kmigraterd's CPU per
second and the LRU pages the demotion walks looked at per second.
"over" rows gave each cgroup a budget of half its hot data.
"""
import os
import statistics
import sys


def parse(path):
    r = {"t95": []}
    for line in open(path):
        w = line.split()
        if line.startswith("bench scale "):
            kv = dict(zip(w[2::2], w[3::2]))
            r["n"], r["fast"] = int(kv["cgroups"]), int(kv["fast_mb"])
            r["nice"] = int(kv.get("nice", 0))
            r["over"] = int(kv.get("over", 0))
            r["secs"] = int(kv.get("seconds", 30))
        elif len(w) == 3 and w[0] == "bench" and w[2].isdigit():
            r[w[1]] = int(w[2])
        elif line.startswith("bench cgroup "):
            kv = dict(zip(w[4::2], w[5::2]))
            r["t95"].append(float(kv.get("t95", -1)))
            for k in ("promoted", "demoted", "lru_seen"):
                r[k] = r.get(k, 0) + int(kv.get(k) or 0)
    return r if "n" in r and "wall_s" in r else None


def main(d):
    rows = {}
    for f in sorted(os.listdir(d)):
        r = parse(os.path.join(d, f))
        if r:
            rows.setdefault((r["over"], r["n"], r["fast"], r["secs"], r["nice"]), []).append(r)
    med = statistics.median
    print("budgets | cgroups | fast MiB | run s | nice | runs | ksamplingd ms/s |"
          " kmigraterd ms/s | promoted | demoted |"
          " LRU pages seen per demoted page | t95 s, median cgroup |"
          " slowest | spread | last 10 s: kmigraterd ms/s |"
          " last 10 s: LRU pages seen/s | htmm record ms/s")
    print("---" + " | ---" * 16)
    for (over, n, fast, secs, nice), rs in sorted(rows.items()):
        def m(k):
            return med(r[k] for r in rs)
        seen = med(r["lru_seen"] / max(r["demoted"], 1) for r in rs)
        t = [x for r in rs for x in r["t95"]]
        never = any(x < 0 for x in t)
        ok = [x for x in t if x >= 0]
        slow = "never" if never or not ok else "%.1f" % max(ok)
        spread = "-" if never or not ok else "%.1f" % (max(ok) - min(ok))
        st = [r for r in rs if r.get("steady_s")]
        if st:
            steady = "%.0f | %.0f" % (
                med(r["steady_kmigraterd_ms"] / r["steady_s"] for r in st),
                med(r["steady_lru_seen"] / r["steady_s"] for r in st))
        else:
            steady = "- | -"
        rec = [r["record_cpu_ms"] / r["wall_s"] for r in rs if "record_cpu_ms" in r]
        steady += " | " + ("%.1f" % med(rec) if rec else "-")
        print("%s | %d | %d | %d | %d | %d | %.0f | %.0f | %d | %d | %.2f | %s | %s | %s | %s" % (
            "half the hot data" if over else "half the memory",
            n, fast, secs, nice, len(rs), m("ksamplingd_ms") / m("wall_s"),
            m("kmigraterd_ms") / m("wall_s"), m("promoted"), m("demoted"),
            seen, "%.1f" % med(ok) if ok else "never", slow, spread, steady))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")

#!/usr/bin/env python3
"""Markdown summary of scripts/bench-java.sh's results.jsonl: per size and operation, the
medians of ours and of Java (default heap), the ratios Java / ours, the files each deleted,
and Java's smallest working -Xmx."""
import json
import statistics
import sys
from collections import defaultdict

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
timed = defaultdict(list)
xmx = defaultdict(list)
for r in rows:
    key = (r["size"], r["op"])
    if r["xmx_mb"]:
        xmx[key].append(r)
    elif r["ok"]:
        timed[key, r["impl"]].append(r)


def med(runs, field):
    vals = [r[field] for r in runs if r.get(field) is not None]
    return statistics.median(vals) if vals else float("nan")


def smallest_text(smallest, failed):
    """`X MiB (X/2 fails)`, or `≤ X MiB` when no smaller heap was tried."""
    below = [f for f in failed if smallest is None or f < smallest]
    if smallest is None:
        return f"> {below[-1]} MiB (not found)" if below else "n/a"
    if below and below[-1] * 2 == smallest:
        return f"{smallest} MiB ({below[-1]} MiB fails)"
    return f"≤ {smallest} MiB (lowest tried)"


print("| size | operation | runs | ours wall s (inner) | Java wall s (inner, no JVM start) | "
      "Java / ours wall | ours CPU s | Java CPU s | ours peak RSS MiB | Java peak RSS MiB | "
      "Java smallest -Xmx (its peak RSS) | Java -Xmx / ours RSS | files deleted ours / Java |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for size, op in sorted({k for k, _ in timed}, key=lambda k: (k[0] != "medium", k)):
    o, j = timed[(size, op), "ours"], timed[(size, op), "java"]
    ok = sorted(r["xmx_mb"] for r in xmx[size, op] if r["ok"])
    failed = sorted(r["xmx_mb"] for r in xmx[size, op] if not r["ok"])
    smallest = ok[0] if ok else None

    def rss_at(mb):
        runs = [r for r in xmx[size, op] if r["ok"] and r["xmx_mb"] == mb]
        return f" ({runs[0]['rss_kb'] / 1024:.0f} MiB)" if runs else ""

    ours_rss = med(o, "rss_kb") / 1024
    deleted_o = sorted({r.get("deleted_files") for r in o})
    deleted_j = sorted({r.get("deleted_files") for r in j})
    print(f"| {size} | {op} | {len(o)}/{len(j)} "
          f"| {med(o, 'wall_s'):.2f} ({med(o, 'inner_s'):.2f}) "
          f"| {med(j, 'wall_s'):.2f} ({med(j, 'inner_s'):.2f}) "
          f"| {med(j, 'wall_s') / med(o, 'wall_s'):.1f}x "
          f"| {med(o, 'cpu_s'):.2f} | {med(j, 'cpu_s'):.2f} "
          f"| {ours_rss:.0f} | {med(j, 'rss_kb') / 1024:.0f} "
          f"| {smallest_text(smallest, failed)}{rss_at(smallest)} "
          f"| {f'{smallest / ours_rss:.1f}x' if smallest else 'n/a'} "
          f"| {'/'.join(map(str, deleted_o))} / {'/'.join(map(str, deleted_j))} |")

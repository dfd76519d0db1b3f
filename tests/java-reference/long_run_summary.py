#!/usr/bin/env python3
"""Totals of a long java_reference run from its per-seed results.

`PAIMON_JAVA_RESULTS=<file>.jsonl cargo test --test java_reference java_differential` appends
one JSON line per seed-operation ("kind": "operation") and one per seed ("kind": "seed").
This prints, for every file given (or every *.jsonl under a directory given), the seeds
covered, the operations run per operation name, the classified differences by reason (total
and per operation), the unclassified differences, the versions whose rows changed (rows lost
by Java's judgement), the failures and the time. A seed that appears more than once (a rerun)
counts once: its last complete record wins.

Usage: long_run_summary.py FILE_OR_DIR... [--failures]
"""

import json
import os
import sys
from collections import Counter, defaultdict


def files_of(args):
    for a in args:
        if os.path.isdir(a):
            for name in sorted(os.listdir(a)):
                if name.endswith(".jsonl"):
                    yield os.path.join(a, name)
        else:
            yield a


def load(paths):
    """The last seed record and the operation records that came with it, per seed."""
    seeds = {}
    pending = defaultdict(list)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    print(f"{path}:{n}: not JSON (a run cut off mid-line?), skipped", file=sys.stderr)
                    continue
                key = (r.get("seed"), r.get("size"), r.get("decoupled"))
                if r.get("kind") == "operation":
                    # The same operation again before the seed's record: the earlier run of
                    # this seed was cut off; its operations do not count.
                    if any(p["op"] == r["op"] for p in pending[key]):
                        pending[key] = []
                    pending[key].append(r)
                elif r.get("kind") == "seed":
                    seeds[key] = (r, pending.pop(key, []))
    # Operations of a seed whose run was cut off before its seed record: reported apart.
    return seeds, pending


def main(argv):
    show_failures = "--failures" in argv
    args = [a for a in argv if a != "--failures"]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    seeds, cut = load(list(files_of(args)))
    if not seeds:
        print("no complete seed in the results")
        return 1
    per_op = Counter()
    by_reason = Counter()
    by_op_reason = defaultdict(Counter)
    unclassified = Counter()
    rows_lost = Counter()
    failures = []
    seconds = 0.0
    op_seconds = Counter()
    seed_failures = 0
    for (seed, size, decoupled), (s, ops) in sorted(seeds.items(), key=lambda kv: kv[0][0]):
        seconds += s.get("seconds", 0.0)
        if s.get("error"):
            failures.append(f"seed {seed}: {s['error']}")
        seed_failures += s.get("failures", 0)
        for r in ops:
            op = r["op"]
            per_op[op] += 1
            op_seconds[op] += r.get("seconds", 0.0)
            for reason, n in r.get("classified", {}).items():
                by_reason[reason] += n
                by_op_reason[op][reason] += n
            unclassified[op] += r.get("unclassified", 0)
            rows_lost[op] += r.get("rows_lost", 0)
            failures.extend(r.get("failures", []))
    ids = sorted(k[0] for k in seeds)
    sizes = sorted({k[1] for k in seeds})
    modes = sorted({str(k[2]) for k in seeds})
    print(f"seeds: {len(ids)} ({ids[0]}-{ids[-1]}), size {sizes}, decoupled {modes}")
    print(f"time: {seconds:.0f} s in total, {seconds / len(ids):.0f} s per seed")
    print()
    print(f"{'operation':<22}{'runs':>6}{'unclass.':>10}{'rows lost':>11}{'time s':>9}  classified")
    for op in sorted(per_op):
        cls = ", ".join(f"{k} {v}" for k, v in sorted(by_op_reason[op].items())) or "-"
        print(
            f"{op:<22}{per_op[op]:>6}{unclassified[op]:>10}{rows_lost[op]:>11}"
            f"{op_seconds[op]:>9.0f}  {cls}"
        )
    print(
        f"{'total':<22}{sum(per_op.values()):>6}{sum(unclassified.values()):>10}"
        f"{sum(rows_lost.values()):>11}{sum(op_seconds.values()):>9.0f}"
    )
    print()
    print("classified differences by reason:")
    for reason, n in sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {reason:<42}{n:>6}")
    print(f"failures: {seed_failures} (unclassified differences and every other failed check)")
    if cut:
        print(f"seeds cut off before their end (not counted): {sorted(k[0] for k in cut)}")
    if show_failures:
        for f in failures:
            print(f"  {f}")
    return 0 if seed_failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Lists the `use` edges between the crate's modules (file level) and reports cycles.

Usage: scripts/module-cycles.py [PREFIX] [--edges]
PREFIX (default `crate`) limits the graph to modules under it, e.g. `crate::clean`.
Exit status 1 when a cycle exists among those modules.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def module_of(rel):
    parts = rel[:-3].split(os.sep)
    if parts in (["lib"], ["main"]):
        return "crate"
    if parts[-1] == "mod":
        parts = parts[:-1]
    return "::".join(["crate"] + parts)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())


def drop_test_modules(text):
    """Removes inline `#[cfg(test)] mod name { ... }` blocks (their `super` is the file itself)."""
    out = text
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", out)
        if not m:
            return out
        depth, i = 1, m.end()
        while i < len(out) and depth:
            depth += out[i] == "{"
            depth -= out[i] == "}"
            i += 1
        out = out[: m.start()] + out[i:]


def expand(tree):
    """Paths of a use tree like `a::{b, c::{d, e}}` (no `as`, no glob handling needed)."""
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if not m:
        return [re.sub(r"as\w+$", "", tree)]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur:
        parts.append(cur)
    out = []
    for p in parts:
        for e in expand(p):
            out.append(prefix.rstrip(":") if e == "self" else prefix + e)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    prefix = args[0] if args else "crate"
    show_edges = "--edges" in sys.argv
    files = {}
    for d, _, names in os.walk(ROOT):
        for n in names:
            if n.endswith(".rs"):
                rel = os.path.relpath(os.path.join(d, n), ROOT)
                if rel.split(os.sep)[0] == "bin":
                    continue
                files[module_of(rel)] = os.path.join(d, n)
    modules = set(files)

    def resolve(path):
        segs = path.split("::")
        for i in range(len(segs), 0, -1):
            cand = "::".join(segs[:i])
            if cand in modules:
                return cand
        return None

    edges = {}
    for mod, path in files.items():
        text = drop_test_modules(strip_comments(open(path, encoding="utf-8").read()))
        children = set(re.findall(r"\bmod\s+(\w+)\s*;", text))
        targets = set()
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            for p in expand(m.group(1)):
                segs = p.split("::")
                if segs[0] == "crate":
                    full = p
                elif segs[0] == "super":
                    base = mod.split("::")
                    while segs and segs[0] == "super":
                        base, segs = base[:-1], segs[1:]
                    full = "::".join(base + segs)
                elif segs[0] == "self":
                    full = "::".join([mod] + segs[1:])
                elif segs[0] in children:
                    full = mod + "::" + p
                else:
                    continue
                targets.add(full)
        for m in re.finditer(r"\bcrate(?:::\w+)+", text):
            targets.add(m.group(0))
        resolved = {resolve(t) for t in targets} - {None, mod}
        edges[mod] = sorted(resolved)

    inside = lambda m: m == prefix or m.startswith(prefix + "::")
    nodes = sorted(m for m in modules if inside(m))
    graph = {m: [t for t in edges[m] if inside(t)] for m in nodes}
    if show_edges:
        for m in nodes:
            print(f"{m} -> {', '.join(graph[m]) or '(none)'}")

    # Tarjan's strongly connected components.
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    edge_count = sum(len(v) for v in graph.values())
    if not sccs:
        print(f"no cycle among {len(nodes)} modules under {prefix} ({edge_count} edges)")
        return 0
    for comp in sccs:
        print("cycle: " + " <-> ".join(comp))
        for m in comp:
            print(f"  {m} -> {', '.join(t for t in graph[m] if t in comp)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())

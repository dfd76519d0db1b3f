#!/usr/bin/env python3
"""Lists the `use` edges between the crate's modules (file level) and reports cycles.

Usage: scripts/module-cycles.py [PREFIX] [--edges] [--root=DIR]
PREFIX (default `crate`) limits the graph to modules under it, e.g. `crate::clean`. DIR (default
the crate's `src/`) is the source tree to read.
Exit status 1 when a cycle exists among those modules.

An edge A -> B means a file of module A names an item that module B defines. Paths come from
`use` declarations (`crate::`, `super::`, `self::`, or a child module's name) and from paths
written in code that start with `crate::`, `super::`, `self::`, a child module's name (a parent
`mod.rs` calling `child::item(..)` depends on that child as much as one that imports it) or a
name the file's `use` declarations bind (`manifest::decode(..)` after `use crate::spec::manifest;`); `#[cfg(test)] mod … { … }` blocks
and comments are ignored. A path is followed through imports to the module that defines the
item: `crate::storage::Location` leads to `crate::storage::location` when storage/mod.rs says
`pub use location::Location;`. Every `use` of a module counts as such an import, `pub` or not,
since a child may name its parent's private imports; `as` renames are followed; a glob import
(`pub use report::*;`) is followed when the glob's module defines or imports the name. A name
that a module neither imports nor is found behind a glob counts as defined there. Item
definitions are recognised by keyword (`fn`, `struct`, `enum`, `trait`, `type`, `const`,
`static`, `mod`, `union`, `macro_rules!`), not by a Rust parser.
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
    """(path, bound name) pairs of a use tree like `a::{self, b as c, d::*}`.

    The bound name is what the declaration makes visible: `c` for `a::b as c`, `a` for
    `a::{self}`, `*` for a glob, None for `as _`.
    """
    tree = re.sub(r"\s+", " ", tree).strip()
    m = re.match(r"^(.*?)\{(.*)\}$", tree, flags=re.S)
    if not m:
        m = re.match(r"^(.*?)\s+as\s+(\w+)$", tree)
        if m:
            path, name = m.group(1).replace(" ", ""), m.group(2)
            return [(path, None if name == "_" else name)]
        path = tree.replace(" ", "")
        return [(path, path.split("::")[-1])]
    prefix, inner = m.group(1).replace(" ", ""), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur.strip():
        parts.append(cur)
    out = []
    for p in parts:
        for path, name in expand(p):
            if path == "self":
                base = prefix.rstrip(":")
                out.append((base, base.split("::")[-1] if name == "self" else name))
            else:
                out.append((prefix + path, name))
    return out


ITEM = r"\b(?:fn|struct|enum|trait|type|const|static|mod|union|macro_rules!)\s+{}\b"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    prefix = args[0] if args else "crate"
    show_edges = "--edges" in sys.argv
    root = next((a[len("--root=") :] for a in sys.argv[1:] if a.startswith("--root=")), ROOT)
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith(".rs"):
                rel = os.path.relpath(os.path.join(d, n), root)
                if rel.split(os.sep)[0] == "bin":
                    continue
                files[module_of(rel)] = os.path.join(d, n)
    modules = set(files)
    texts = {
        mod: drop_test_modules(strip_comments(open(path, encoding="utf-8").read()))
        for mod, path in files.items()
    }
    children = {mod: set(re.findall(r"\bmod\s+(\w+)\s*;", t)) for mod, t in texts.items()}

    def absolute(mod, path):
        """`path` as written in module `mod`, from `crate`; None for other crates and locals."""
        segs = path.split("::")
        if segs[0] == "crate":
            return path
        if segs[0] in ("super", "self"):
            base = mod.split("::")
            while segs and segs[0] == "super":
                base, segs = base[:-1], segs[1:]
            if segs and segs[0] == "self":
                segs = segs[1:]
            return "::".join(base + segs)
        if segs[0] in children[mod]:
            return mod + "::" + path
        return None

    def code_path(mod, path):
        """A path written in code (not in a `use`), from `crate`; None for other crates and locals.

        Besides `crate::`/`super::`/`self::` paths, a path may start with a child module
        (`decide::decide(..)` in a parent that declares `mod decide;`) or with a name a `use`
        of this module binds (`manifest::for_each_file(..)` after `use crate::spec::manifest;`).
        """
        head, _, rest = path.partition("::")
        if head in ("crate", "super", "self") or head in children[mod]:
            return absolute(mod, path)
        if head in imports[mod]:
            return imports[mod][head] + "::" + rest
        return None

    # What each module's `use` declarations bind: name -> absolute path, plus glob sources.
    imports, globs = {}, {}
    for mod, text in texts.items():
        imports[mod], globs[mod] = {}, []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            for path, name in expand(m.group(1)):
                full = absolute(mod, path)
                if full is None or name is None:
                    continue
                if name == "*":
                    globs[mod].append(full[: -len("::*")])
                else:
                    imports[mod][name] = full

    def longest_module(segs):
        for i in range(len(segs), 0, -1):
            if "::".join(segs[:i]) in modules:
                return i
        return 0

    def resolve(path, depth=0):
        """The module that defines what `path` names, following imports (see the docstring)."""
        segs = [s for s in path.split("::") if s != "*"]
        i = longest_module(segs)
        if i == 0:
            return None
        mod, rest = "::".join(segs[:i]), segs[i:]
        if not rest or depth > 20:
            return mod
        name = rest[0]
        if name in imports[mod]:
            return resolve("::".join([imports[mod][name]] + rest[1:]), depth + 1) or mod
        if not re.search(ITEM.format(name), texts[mod]):
            for g in globs[mod]:
                gi = longest_module(g.split("::"))
                source = "::".join(g.split("::")[:gi])
                if source and (
                    name in imports[source] or re.search(ITEM.format(name), texts[source])
                ):
                    return resolve("::".join([g, *rest]), depth + 1) or mod
        return mod

    edges = {}
    for mod, text in texts.items():
        targets = set()
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            for path, _ in expand(m.group(1)):
                full = absolute(mod, path)
                if full is not None:
                    targets.add(full)
        code = re.sub(r"\buse\s+[^;]+;", "", text)
        for m in re.finditer(r"(?<![\w:])\w+(?:::\w+)+", code):
            full = code_path(mod, m.group(0))
            if full is not None:
                targets.add(full)
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

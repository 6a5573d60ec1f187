#!/usr/bin/env python3
"""Lists which top-level modules of the shrec library use which (`crate::X` paths outside
comments) and reports every dependency cycle. Exit status 1 if there is a cycle.
Usage: scripts/module_graph.py [SRC_DIR] [--ignore MOD ...]"""
import os, re, sys
args = sys.argv[1:]
src = args[0] if args and not args[0].startswith('--') else os.path.join(os.path.dirname(__file__), '..', 'src')
ignore = set(args[args.index('--ignore') + 1:]) if '--ignore' in args else set()
lib = open(os.path.join(src, 'lib.rs')).read()
mods = [m for m in re.findall(r'^pub mod (\w+);', lib, re.M) if m not in ignore]
deps = {}
for m in mods:
    files = [os.path.join(src, m + '.rs')] if os.path.exists(os.path.join(src, m + '.rs')) else []
    for root, _, names in os.walk(os.path.join(src, m)):
        files += [os.path.join(root, n) for n in names if n.endswith('.rs')]
    used = set()
    for f in files:
        for line in open(f):
            code = line.split('//')[0]
            used |= set(re.findall(r'\bcrate::(\w+)', code))
    deps[m] = sorted(u for u in used if u in mods and u != m)
for m in mods:
    print(f'{m:12} -> {" ".join(deps[m]) or "(nothing)"}')
# cycles: strongly connected components with more than one module
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in deps[v]:
        if w not in index: visit(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        if len(c) > 1: sccs.append(sorted(c))
for m in mods:
    if m not in index: visit(m)
for c in sccs: print('CYCLE:', ' <-> '.join(c))
print('no cycle' if not sccs else f'{len(sccs)} cycle(s)')
sys.exit(1 if sccs else 0)

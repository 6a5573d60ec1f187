#!/usr/bin/env python3
"""Lists which top-level modules of the shrec library use which (`crate::X` paths outside
comments) and reports every dependency cycle; then the same for the submodules of `formats`
(`crate::formats::X` and `super::` paths), where the families must not use each other in a
circle either. Exit status 1 if there is a cycle.
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

def cycles(mods, deps):
    """Strongly connected components with more than one module (Tarjan)."""
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
    return sccs

def inside(parent):
    """The submodules of `parent` and which of them each one uses."""
    pdir = os.path.join(src, parent)
    subs = sorted(n[:-3] if n.endswith('.rs') else n for n in os.listdir(pdir)
                  if n != 'mod.rs' and (n.endswith('.rs') or os.path.isdir(os.path.join(pdir, n))))
    sub_deps = {m: set() for m in subs}
    for root, _, names in os.walk(pdir):
        for name in names:
            if not name.endswith('.rs') or (root == pdir and name == 'mod.rs'):
                continue
            rel = os.path.relpath(os.path.join(root, name), pdir)[:-3].split(os.sep)
            if rel[-1] == 'mod':
                rel = rel[:-1]
            path = [parent] + rel  # the file's module path below the crate
            owner = rel[0]
            for line in open(os.path.join(root, name)):
                code = line.split('//')[0]
                used = set(re.findall(r'\bcrate::' + parent + r'::(\w+)', code))
                for ups, target in re.findall(r'\b((?:super::)+)(\w+)', code):
                    base = path[:len(path) - ups.count('super::')]
                    if base == [parent]:
                        used.add(target)
                sub_deps[owner] |= {u for u in used if u in sub_deps and u != owner}
    return subs, {m: sorted(d) for m, d in sub_deps.items()}

found = cycles(mods, deps)
for c in found: print('CYCLE:', ' <-> '.join(c))
print('no cycle' if not found else f'{len(found)} cycle(s)')
for parent in ['formats']:
    if parent not in mods:
        continue
    subs, sub_deps = inside(parent)
    print(f'\ninside {parent}:')
    for m in subs:
        print(f'{m:12} -> {" ".join(sub_deps[m]) or "(nothing)"}')
    inner = cycles(subs, sub_deps)
    for c in inner: print(f'CYCLE in {parent}:', ' <-> '.join(c))
    print('no cycle' if not inner else f'{len(inner)} cycle(s)')
    found += inner
sys.exit(1 if found else 0)

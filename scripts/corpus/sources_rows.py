#!/usr/bin/env python3
"""Add SOURCES.md rows for corpus files that have none (tests/corpus helper).

    sources_rows.py tests/corpus/agal        AGAL: provenance from the .agal.txt comment header
    sources_rows.py tests/corpus/gx2         GX2: provenance from scripts/corpus/specs/*.json

Inserts one file-list row per new file (path, bytes, sha256, repository, commit, path in the
repository, license, how obtained), keeps the table sorted, updates the "N files." line and
appends the per-file facts rows (AGAL: $SHREC_TOOLS/agal_corpus.py; GX2: $SHREC_TOOLS/gx2check.py, as
the existing tables). Rows of files already listed are left alone.
"""
import glob
import hashlib
import json
import os
import re
import subprocess
import sys

# The folder of the independent checkers (agal_corpus.py, gx2check.py): they are not part of
# this repository, so it must be named.
TOOLS = os.environ.get("SHREC_TOOLS")
if not TOOLS:
    sys.exit("sources_rows.py: set SHREC_TOOLS to the folder holding agal_corpus.py and gx2check.py")
HERE = os.path.dirname(os.path.abspath(__file__))
LICENSES = {
    "away3d/away3d-core-fp11": "Apache-2.0 (away3d-license.txt)",
    "Gamua/Starling-Framework": "BSD-2-Clause (LICENSE.md)",
    "wiiu-env/launchiine": "GPL-3.0-or-later (file header; the repository has no LICENSE file)",
}


def sha(p):
    return hashlib.sha256(open(p, "rb").read()).hexdigest()


def agal_header(txt):
    h = {}
    for line in open(txt):
        m = re.match(r"// (source|path|note): (.*)", line)
        if m:
            h[m.group(1)] = m.group(2).strip()
    repo, rest = h["source"].split("@", 1)
    commit = rest.split()[0]
    path = h["path"]
    return repo, commit, path, h.get("note", "")


def agal_row(root, rel):
    full = os.path.join(root, rel)
    txt = full if rel.endswith(".agal.txt") else full + ".txt"
    repo, commit, path, note = agal_header(txt)
    src_file = path.split(" ")[0]
    expanded = any(w in note for w in ("expanded", "replaced", "getFragmentCode()", "getStencilVertex()", "getSphereFragment()", "mode ", "modes ", "profile", "layer"))
    if rel.endswith(".agal.txt"):
        how = (f"program text expanded from {src_file} for the variant named in its note (comment header with provenance added)"
               if expanded else f"program text copied from {src_file} (comment header with provenance added)")
    else:
        stem = os.path.basename(rel)
        how = f"assembled from {stem}.txt with tools/mini_asm.py (Python port of AGALMiniAssembler)"
        if "nearst" in open(txt).read():
            how += "; the unknown sampler option 'nearst' dropped first, as AGALMiniAssembler turns it into LOD bias int(NaN*8) = 0"
    return repo, commit, path, how


def gx2_rows():
    out = {}
    for spec in glob.glob(os.path.join(HERE, "specs", "*.json")):
        s = json.load(open(spec))
        repo_commit, path = s["source"].split(":", 1)
        repo, commit = repo_commit.split("@")
        owner_repo = repo.replace("/", "+")
        rel = f"{owner_repo}/{os.path.dirname(path)}/{os.path.splitext(os.path.basename(path))[0]}.gsh"
        arrays = ", ".join(f"`{x['program']}` + `{x['regs']}`" for x in s["shaders"])
        how = (f"GFD built by scripts/corpus/make_gfd.py (spec scripts/corpus/specs/{os.path.basename(spec)}) from the C arrays "
               f"{arrays} and the variables the constructor adds")
        out[rel] = (repo, commit, path, how)
    return out


def main(root):
    family = os.path.basename(os.path.normpath(root))
    src = os.path.join(root, "SOURCES.md")
    text = open(src).read()
    listed = set(re.findall(r"^\| ([^|]+?) \| \d+ \| [0-9a-f]{64} \|", text, re.M))
    files = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "**", "*"), recursive=True)
                   if os.path.isfile(p) and not p.endswith(".md"))
    new = [f for f in files if f not in listed]
    gx2 = gx2_rows() if family == "gx2" else {}
    rows = {}
    for rel in new:
        if family == "agal":
            repo, commit, path, how = agal_row(root, rel)
        elif rel in gx2:
            repo, commit, path, how = gx2[rel]
        else:
            sys.exit(f"no provenance for {rel}")
        full = os.path.join(root, rel)
        rows[rel] = f"| {rel} | {os.path.getsize(full)} | {sha(full)} | {repo} | {commit} | {path} | {LICENSES[repo]} | {how} |"
    lines = text.split("\n")
    # file table: the first table after the title; insert sorted
    start = next(i for i, l in enumerate(lines) if l.startswith("| path | bytes | sha256"))
    end = start + 2
    while end < len(lines) and lines[end].startswith("| "):
        end += 1
    table = lines[start + 2:end] + list(rows.values())
    table.sort(key=lambda l: l.split(" | ")[0][2:])
    lines[start + 2:end] = table
    total = len(table)
    out = "\n".join(lines)
    out = re.sub(r"^\d+ files\.$", f"{total} files.", out, count=1, flags=re.M)
    # facts rows
    if family == "agal":
        bins = [r for r in rows if r.endswith(".agal")]
        if bins:
            facts = json.loads(subprocess.run([sys.executable, f"{TOOLS}/agal_corpus.py"] + bins, cwd=root, capture_output=True, text=True).stdout)
            extra = []
            for d in facts:
                feats = ", ".join(d["features"]) or "-"
                haz = ", ".join(f"{k} x{v}" for k, v in sorted(d.get("hazards", {}).items())) or "-"
                extra.append(f"| {d['file']} | {d['version']} | {d['type']} | {d['tokens']} | {feats} | {haz} |")
            out = out.rstrip("\n") + "\n" + "\n".join(extra) + "\n"
    elif family == "gx2":
        bins = [r for r in rows if r.endswith(".gsh")]
        if bins:
            facts = json.loads(subprocess.run([sys.executable, f"{TOOLS}/gx2check.py"] + bins, cwd=root, capture_output=True, text=True).stdout)
            extra = []
            for f in bins:
                d = facts[f]
                blocks = d["blocks"]
                heads = [b for b in blocks if b["type"].endswith("ShaderHeader")]
                progs = [b for b in blocks if b["type"].endswith("ShaderProgram")]
                modes = ", ".join(f"{b['type'].replace('ShaderHeader', '')} ({b['gx2']['mode']})" for b in heads) or "-"
                sizes = ", ".join(f"{b['type'].replace('ShaderProgram', '')} {b['size']}" for b in progs) or "-"
                ops = sorted({op for b in progs for op in b.get("cf", {}).get("ops", {}) if op.isupper()})
                extra.append(f"| {f} | {len(blocks)} | {modes} | {sizes} | {', '.join(ops) or '-'} |")
            out = out.rstrip("\n") + "\n" + "\n".join(extra) + "\n"
    # keep the facts table (the last table) sorted by path
    ls = out.rstrip("\n").split("\n")
    h = max(i for i, l in enumerate(ls) if l.startswith("| path |"))
    body = [l for l in ls[h + 2:] if l.startswith("| ")]
    ls[h + 2:] = sorted(body, key=lambda l: l.split(" | ")[0][2:])
    out = "\n".join(ls) + "\n"
    open(src, "w").write(out)
    print(f"{family}: {len(rows)} rows added, {total} files listed")


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
"""Extract integer arrays from C / C++ source text (tests/corpus provenance helper).

    c_arrays.py SRC                      list the arrays found (name, element size, count)
    c_arrays.py SRC NAME -o OUT [--le]   write array NAME as bytes

Arrays look like `[static] [const] TYPE NAME[...] = { 0x.., 12, ... };`. Elements of 32-bit
types (uint32_t, u32, unsigned int, DWORD, int) are written big-endian by default: the byte
order of a u32 array in memory on the PowerPC consoles (Wii U, Xbox 360), which is how the
corpus stores converted Latte and Xenos microcode. `--le` writes little-endian words instead.
8-bit types (u8, uint8_t, unsigned char, char) are written byte by byte.
No dependencies; used by make_gfd.py.
"""
import re
import sys

WIDTH = {
    "uint32_t": 4, "u32": 4, "unsigned int": 4, "DWORD": 4, "int": 4, "uint": 4,
    "uint8_t": 1, "u8": 1, "unsigned char": 1, "char": 1, "BYTE": 1,
}
DECL = re.compile(
    r"(?:static\s+)?(?:const\s+)?(?:static\s+)?(unsigned\s+int|unsigned\s+char|uint32_t|u32|DWORD|int|uint|uint8_t|u8|char|BYTE)"
    r"\s+(?:const\s+)?([A-Za-z_]\w*)\s*\[[^\]]*\]\s*=\s*\{(.*?)\}\s*;",
    re.S,
)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def arrays(text):
    """{name: (element width in bytes, [values])} for every integer array in `text`."""
    out = {}
    for m in DECL.finditer(strip_comments(text)):
        ty = " ".join(m.group(1).split())
        try:
            vals = [int(v, 0) for v in (t.strip() for t in m.group(3).split(",")) if v]
        except ValueError:
            continue  # an initializer with names or expressions (a key map, a table of enums)
        out[m.group(2)] = (WIDTH[ty], vals)
    return out


def to_bytes(width, vals, little=False):
    order = "little" if little else "big"
    return b"".join((v & ((1 << (8 * width)) - 1)).to_bytes(width, order) for v in vals)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    found = arrays(open(argv[1], encoding="utf-8", errors="replace").read())
    if len(argv) == 2:
        for name, (w, vals) in found.items():
            print(f"{name}\t{w}\t{len(vals)}")
        return
    name = argv[2]
    if name not in found:
        sys.exit(f"no array {name} in {argv[1]} (found: {', '.join(found)})")
    out = argv[argv.index("-o") + 1]
    w, vals = found[name]
    open(out, "wb").write(to_bytes(w, vals, "--le" in argv))


if __name__ == "__main__":
    main(sys.argv)

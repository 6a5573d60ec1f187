#!/usr/bin/env python3
"""Build a GFD (`.gsh`, "Gfx2") file from GX2 shaders given as C arrays (tests/corpus helper).

    make_gfd.py SPEC.json OUT.gsh [SOURCE]

SOURCE (default: the spec's "source" field) is the upstream source file holding the arrays.

Homebrew such as dimok's libgui (loadiine_gx2, homebrew_launcher, launchiine ...) ships each
shader as two C arrays: the program (Latte microcode, u32 words) and the register block of the
GX2 shader struct (GX2VertexShader: 52 words = 0xD0 bytes; GX2PixelShader: 41 words = 0xA4
bytes), and sets the variables in code (`addUniformVar`, `addAttribVar`, `addSamplerVar`). This
script puts exactly those bytes into the container the recompiler reads:

- file header: "Gfx2", 0x20, version 7.1, GPU version 2, align mode 0;
- per shader a header block (type 3 vertex / 6 pixel) holding the GX2 struct (0x134 / 0xE8 bytes,
  big-endian: the register words from the array, then program size, pointer 0, mode, the
  (count, pointer) pairs of the variable arrays, zeros for ring size / stream out / GX2RBuffer),
  the variable arrays, their name strings, a patch table and the 0x28-byte `}BLK` relocation
  trailer (pointers tagged 0xD06xxxxx for data, 0xCA7xxxxx for strings, offsets from the block
  data start) — the layout of the GFD files in tests/corpus/gx2 (e.g. wut's pos_col_shader.gsh);
- per shader a program block (type 5 / 7) holding the program array, each u32 written
  big-endian (the array's bytes in the console's memory, as in every GFD file);
- an end-of-file block (type 1).

SPEC.json:
  {"source": "path/to/Shader.cpp",
   "shaders": [{"kind": "vertex" | "pixel", "program": ARRAY, "regs": ARRAY, "mode": 0,
                "uniform_vars": [[name, type, count, offset, block], ...],
                "attrib_vars":  [[name, type, count, location], ...],
                "sampler_vars": [[name, type, location], ...]}]}
`type` is a GX2ShaderVarType / GX2SamplerVarType name (FLOAT4, FLOAT4X4, SAMPLER_2D, ...) or a
number. "source" names the file in its repository ("owner/repo@commit:path").
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import c_arrays  # noqa: E402

VAR_TYPES = {n: i for i, n in enumerate(
    "VOID BOOL INT UINT FLOAT DOUBLE DOUBLE2 DOUBLE3 DOUBLE4 FLOAT2 FLOAT3 FLOAT4 BOOL2 BOOL3 BOOL4 "
    "INT2 INT3 INT4 UINT2 UINT3 UINT4 FLOAT2X2 FLOAT2X3 FLOAT2X4 FLOAT3X2 FLOAT3X3 FLOAT3X4 FLOAT4X2 "
    "FLOAT4X3 FLOAT4X4".split())}
SAMPLER_TYPES = {"SAMPLER_1D": 0, "SAMPLER_2D": 1, "SAMPLER_3D": 3, "SAMPLER_CUBE": 4}

# kind: (struct size, register bytes, header block type, program block type,
#        offsets of size / mode / uniform blocks / uniform vars / initial values / loop vars /
#        sampler vars / attrib vars) — docs/isa/gx2.md §2, shrec src/formats/gx2/shader_struct.rs
KINDS = {
    "vertex": dict(size=0x134, regs=0xD0, hdr=3, prog=5, psize=0xD0, mode=0xD8, ub=0xDC, uv=0xE4, iv=0xEC, lv=0xF4, sv=0xFC, av=0x104),
    "pixel": dict(size=0xE8, regs=0xA4, hdr=6, prog=7, psize=0xA4, mode=0xAC, ub=0xB0, uv=0xB8, iv=0xC0, lv=0xC8, sv=0xD0, av=None),
}
TAG_DATA, TAG_STRING = 0xD0600000, 0xCA700000


def vtype(t, table):
    return t if isinstance(t, int) else table[t]


def header_block(k, regs, program_size, sh):
    s = bytearray(k["size"])
    if len(regs) != k["regs"]:
        raise SystemExit(f"register array has 0x{len(regs):X} bytes, a {sh['kind']} struct needs 0x{k['regs']:X}")
    s[: len(regs)] = regs
    struct.pack_into(">III", s, k["psize"], program_size, 0, sh.get("mode", 0))
    data = bytearray(s)
    strings = []  # (field offset in data, string)
    patches = []  # (field offset, tag)

    def put_array(field, entries):
        if not entries:
            return
        start = len(data)
        struct.pack_into(">II", data, field, len(entries), TAG_DATA | start)
        patches.append((field + 4, TAG_DATA))
        for e in entries:
            at = len(data)
            data.extend(e["bytes"])
            if "name" in e:
                strings.append((at, e["name"]))

    put_array(k["uv"], [dict(name=n, bytes=struct.pack(">IIIIi", 0, vtype(t, VAR_TYPES), c, o, b)) for n, t, c, o, b in sh.get("uniform_vars", [])])
    put_array(k["sv"], [dict(name=n, bytes=struct.pack(">III", 0, vtype(t, SAMPLER_TYPES), loc)) for n, t, loc in sh.get("sampler_vars", [])])
    if k["av"] is not None:
        put_array(k["av"], [dict(name=n, bytes=struct.pack(">IIII", 0, vtype(t, VAR_TYPES), c, loc)) for n, t, c, loc in sh.get("attrib_vars", [])])
    text_start = len(data)
    for at, name in strings:
        struct.pack_into(">I", data, at, TAG_STRING | len(data))
        patches.append((at, TAG_STRING))
        data.extend(name.encode() + b"\0")
    while len(data) % 4:
        data.append(0)
    data_size = len(data)
    patch_at = len(data)
    for field, tag in patches:
        data.extend(struct.pack(">I", tag | field))
    data.extend(b"}BLK" + struct.pack(">IIIIIIIII", 0x28, 0, data_size, TAG_DATA, data_size - text_start, TAG_DATA | text_start, 0, len(patches), TAG_DATA | patch_at))
    return bytes(data)


def block(btype, data, index):
    return b"BLK{" + struct.pack(">IIIIIII", 0x20, 1, 0, btype, len(data), 0, index) + data


def build(spec, src):
    arrays = c_arrays.arrays(open(src, encoding="utf-8", errors="replace").read())
    out = b"Gfx2" + struct.pack(">IIIIIII", 0x20, 7, 1, 2, 0, 0, 0)
    for index, sh in enumerate(spec["shaders"]):
        k = KINDS[sh["kind"]]
        program = c_arrays.to_bytes(*arrays[sh["program"]])
        regs = c_arrays.to_bytes(*arrays[sh["regs"]])
        out += block(k["hdr"], header_block(k, regs, len(program), sh), index)
        out += block(k["prog"], program, index)
    return out + block(1, b"", 0)


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    spec = json.load(open(argv[1]))
    open(argv[2], "wb").write(build(spec, argv[3] if len(argv) == 4 else spec["source"]))


if __name__ == "__main__":
    main(sys.argv)

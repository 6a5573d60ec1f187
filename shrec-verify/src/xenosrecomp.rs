//! XenosRecomp (hedge-dev/XenosRecomp, MIT) as an oracle independent of shrec: reading the
//! `shader_cache.cpp` it writes, and reflecting the SPIR-V interface of a module so that
//! XenosRecomp's and shrec's compilations of the same shader can be compared item by item.
//!
//! XenosRecomp is neither vendored nor built by this repository: the user builds it by its own
//! README and points `SHREC_XR_OUT` at its outputs, which `shrec-verify/tests/xenosrecomp_oracle.rs`
//! reads (layout: docs/xenosrecomp-oracle.md).
//!
//! The `.cpp` layout read here is the one XenosRecomp's `main.cpp` (commit 990d03b) prints:
//! `ShaderCacheEntry g_shaderCacheEntries[] = { { 0x<hash>, dxilOffset, dxilSize, spirvOffset,
//! spirvSize, specConstantsMask }, ... };`, then (DXIL only on Windows builds)
//! `g_compressedDxilCache[]`, then `const uint8_t g_compressedSpirvCache[] = {b,b,...};` (one zstd
//! frame of the concatenated SMOL-V blobs, each encoded with `kEncodeFlagStripDebugInfo`),
//! `g_spirvCacheCompressedSize`, `g_spirvCacheDecompressedSize`, `g_shaderCacheEntryCount`.
//! Offsets and sizes index the decompressed SMOL-V stream; a shader DXC rejected keeps size 0.
//!
//! XenosRecomp's Metal branch (pull request 22, "MSL shader support", 4906992, 2025-08-14) prints
//! eight values and a file name per entry: `{ 0x<hash>, dxilOffset, dxilSize, spirvOffset,
//! spirvSize, airOffset, airSize, specConstantsMask, "<file>" }` (AIR: Metal's compiled form,
//! `g_compressedAirCache[]` when built with Metal). The parser reads both layouts.

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass};
use std::collections::{BTreeMap, HashMap};

/// One row of `g_shaderCacheEntries`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XrEntry {
    pub key: u64,
    pub dxil_offset: usize,
    pub dxil_size: usize,
    pub spirv_offset: usize,
    pub spirv_size: usize,
    /// Metal layout only (0 in the main-branch layout).
    pub air_offset: usize,
    pub air_size: usize,
    pub spec_constants_mask: u32,
}

/// A parsed XenosRecomp `shader_cache.cpp` with its SPIR-V stream decompressed (SMOL-V).
#[derive(Clone, Debug)]
pub struct XrCache {
    pub entries: Vec<XrEntry>,
    /// Bytes of the `g_compressedSpirvCache` zstd frame.
    pub spirv_compressed_len: usize,
    /// The decompressed stream: every shader's SMOL-V, back to back.
    pub spirv_smolv: Vec<u8>,
}

fn parse_uint(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse::<u64>(),
    };
    r.map_err(|e| format!("bad integer {s:?}: {e}"))
}

/// Text of the brace list after `marker` (`marker` ... `{` LIST `}`), and the rest of `text`.
fn brace_list<'a>(text: &'a str, marker: &str) -> Result<(&'a str, &'a str), String> {
    let at = text.find(marker).ok_or_else(|| format!("no {marker:?}"))?;
    let rest = &text[at + marker.len()..];
    let open = rest.find('{').ok_or_else(|| format!("no '{{' after {marker:?}"))?;
    let mut depth = 0usize;
    // Braces inside a string literal (the Metal layout's file names) do not count.
    let mut in_string = false;
    for (i, c) in rest[open..].char_indices() {
        match c {
            '"' => in_string = !in_string,
            _ if in_string => {}
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Ok((&rest[open + 1..open + i], &rest[open + i + 1..]));
                }
            }
            _ => {}
        }
    }
    Err(format!("unterminated list after {marker:?}"))
}

fn size_constant(text: &str, name: &str) -> Result<u64, String> {
    let marker = format!("{name} = ");
    let at = text.find(&marker).ok_or_else(|| format!("no {name}"))?;
    let rest = &text[at + marker.len()..];
    let end = rest.find(';').ok_or_else(|| format!("{name}: no ';'"))?;
    parse_uint(&rest[..end]).map_err(|e| format!("{name}: {e}"))
}

impl XrCache {
    /// Parses and checks XenosRecomp's `.cpp`: entry count, compressed and decompressed sizes,
    /// every entry inside the decompressed stream, and each non-empty blob a SMOL-V stream.
    pub fn parse(text: &str) -> Result<XrCache, String> {
        let (rows, _) = brace_list(text, "g_shaderCacheEntries[] =")?;
        let mut entries = Vec::new();
        let mut rest = rows;
        while let Some(open) = rest.find('{') {
            // The Metal layout ends in a quoted file name, which may hold ',' or '}': the numbers
            // end at its opening quote, the entry after its closing one (XenosRecomp writes the
            // name unescaped, so the closing quote is the last one before the next '}').
            let (numbers, close) = match rest[open..].find(['"', '}']).map(|i| i + open) {
                Some(q) if rest.as_bytes()[q] == b'"' => {
                    let end_quote = rest[q + 1..].find("\"").ok_or("unterminated file name")? + q + 1;
                    let close = rest[end_quote..].find('}').ok_or("unterminated entry")? + end_quote;
                    (&rest[open + 1..q], close)
                }
                Some(close) => (&rest[open + 1..close], close),
                None => return Err("unterminated entry".into()),
            };
            let fields: Vec<&str> = numbers.split(',').map(str::trim).filter(|f| !f.is_empty()).collect();
            let n = |i: usize| parse_uint(fields[i]).map_err(|e| format!("entry {}: {e}", entries.len()));
            // Main branch: key, DXIL, SPIR-V, mask. Metal branch: key, DXIL, SPIR-V, AIR, mask.
            let (air, mask_at) = match fields.len() {
                6 => ((0, 0), 5),
                8 => ((n(5)? as usize, n(6)? as usize), 7),
                k => {
                    return Err(format!(
                        "entry {} has {k} number fields, expected 6 (main branch) or 8 (Metal branch): {:?}",
                        entries.len(),
                        &rest[open..=close]
                    ))
                }
            };
            entries.push(XrEntry {
                key: n(0)?,
                dxil_offset: n(1)? as usize,
                dxil_size: n(2)? as usize,
                spirv_offset: n(3)? as usize,
                spirv_size: n(4)? as usize,
                air_offset: air.0,
                air_size: air.1,
                spec_constants_mask: u32::try_from(n(mask_at)?).map_err(|e| format!("entry {}: mask: {e}", entries.len()))?,
            });
            rest = &rest[close + 1..];
        }
        let count = size_constant(text, "g_shaderCacheEntryCount")?;
        if count as usize != entries.len() {
            return Err(format!("g_shaderCacheEntryCount = {count}, but {} entries", entries.len()));
        }
        let (bytes, _) = brace_list(text, "g_compressedSpirvCache[] =")?;
        let compressed: Vec<u8> = bytes
            .split(',')
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .map(|b| b.parse::<u8>().map_err(|e| format!("g_compressedSpirvCache: byte {b:?}: {e}")))
            .collect::<Result<_, _>>()?;
        let csize = size_constant(text, "g_spirvCacheCompressedSize")? as usize;
        if csize != compressed.len() {
            return Err(format!("g_spirvCacheCompressedSize = {csize}, array holds {}", compressed.len()));
        }
        let dsize = size_constant(text, "g_spirvCacheDecompressedSize")? as usize;
        let spirv_smolv = zstd::bulk::decompress(&compressed, dsize.max(1)).map_err(|e| format!("zstd: {e}"))?;
        if spirv_smolv.len() != dsize {
            return Err(format!("SPIR-V stream decompressed to {} bytes, g_spirvCacheDecompressedSize = {dsize}", spirv_smolv.len()));
        }
        for e in &entries {
            if e.spirv_offset + e.spirv_size > dsize {
                return Err(format!("0x{:016X}: SPIR-V {}+{} outside the {dsize}-byte stream", e.key, e.spirv_offset, e.spirv_size));
            }
        }
        Ok(XrCache { entries, spirv_compressed_len: compressed.len(), spirv_smolv })
    }

    pub fn entry(&self, key: u64) -> Option<&XrEntry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// The shader's SMOL-V as stored, or `None` when XenosRecomp stored nothing (DXC rejected it).
    pub fn smolv(&self, key: u64) -> Option<&[u8]> {
        let e = self.entry(key)?;
        (e.spirv_size != 0).then(|| &self.spirv_smolv[e.spirv_offset..e.spirv_offset + e.spirv_size])
    }

    /// The shader's SPIR-V (SMOL-V decoded), or `Ok(None)` when XenosRecomp stored nothing.
    pub fn spirv(&self, key: u64) -> Result<Option<Vec<u8>>, String> {
        match self.smolv(key) {
            None => Ok(None),
            Some(s) => shrec_runtime::smolv::decode(s).map(Some).map_err(|e| format!("0x{key:016X}: SMOL-V: {e}")),
        }
    }
}

/// Writes `entries` (key, SMOL-V or `None`, mask) in XenosRecomp's `.cpp` layout, SPIR-V only
/// (its Linux build): the inverse of [`XrCache::parse`], for testing the parser.
pub fn write_xr_cpp(entries: &[(u64, Option<Vec<u8>>, u32)], zstd_level: i32) -> String {
    let mut s = String::from("#include \"shader_cache.h\"\nShaderCacheEntry g_shaderCacheEntries[] = {\n");
    let mut stream = Vec::new();
    for (key, smolv, mask) in entries {
        let len = smolv.as_ref().map_or(0, Vec::len);
        s += &format!("\t{{ 0x{key:X}, 0, 0, {}, {len}, {mask} }},\n", stream.len());
        stream.extend_from_slice(smolv.as_deref().unwrap_or(&[]));
    }
    s += "};\n";
    let c = zstd::bulk::compress(&stream, zstd_level).expect("zstd compresses a memory buffer");
    s += "const uint8_t g_compressedSpirvCache[] = {";
    for b in &c {
        s += &format!("{b},");
    }
    s += "};\n";
    s += &format!("const size_t g_spirvCacheCompressedSize = {};\n", c.len());
    s += &format!("const size_t g_spirvCacheDecompressedSize = {};\n", stream.len());
    s += &format!("const size_t g_shaderCacheEntryCount = {};\n", entries.len());
    s
}

/// The interface of a SPIR-V module as named items with a canonical description each (names
/// and ids do not take part: XenosRecomp strips debug info, and ids are arbitrary):
/// - `entry`: execution model and name, `execution modes`;
/// - `push_constant`: the block's type (member offsets and types);
/// - `descriptor set=S binding=B`: storage class and type;
/// - `spec_id N`: type and default value;
/// - `input location=L` / `output location=L` (with `component=C` when decorated), or
///   `input builtin=X` / `output builtin=X`: type and interpolation decorations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interface {
    pub items: BTreeMap<String, String>,
}

/// One item on which two interfaces differ (`None`: absent on that side).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub item: String,
    pub left: Option<String>,
    pub right: Option<String>,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = |s: &Option<String>| s.clone().unwrap_or_else(|| "(absent)".into());
        write!(f, "{}: {} | {}", self.item, side(&self.left), side(&self.right))
    }
}

impl Interface {
    /// Items of `self` (left) and `other` (right) that differ, in item order.
    pub fn diff(&self, other: &Interface) -> Vec<Difference> {
        let mut keys: Vec<&String> = self.items.keys().chain(other.items.keys()).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .filter_map(|k| {
                let (l, r) = (self.items.get(k), other.items.get(k));
                (l != r).then(|| Difference { item: k.clone(), left: l.cloned(), right: r.cloned() })
            })
            .collect()
    }
}

struct Reflector<'m> {
    m: &'m Module,
    defs: HashMap<u32, &'m Instruction>,
}

fn word(o: &Operand) -> Result<u32, String> {
    match o {
        Operand::LiteralBit32(v) => Ok(*v),
        Operand::IdRef(v) => Ok(*v),
        o => Err(format!("expected a word, got {o:?}")),
    }
}

impl<'m> Reflector<'m> {
    fn def(&self, id: u32) -> Result<&'m Instruction, String> {
        self.defs.get(&id).copied().ok_or_else(|| format!("%{id} is not a type or global"))
    }

    fn decorations(&self, target: u32) -> Vec<&'m Instruction> {
        self.m.annotations.iter().filter(|i| i.class.opcode == Op::Decorate && i.operands.first() == Some(&Operand::IdRef(target))).collect()
    }

    fn decoration(&self, target: u32, d: Decoration) -> Option<&'m Instruction> {
        self.decorations(target).into_iter().find(|i| i.operands.get(1) == Some(&Operand::Decoration(d)))
    }

    fn member_offset(&self, st: u32, member: u32) -> Option<u32> {
        self.m.annotations.iter().find_map(|i| {
            (i.class.opcode == Op::MemberDecorate
                && i.operands.first() == Some(&Operand::IdRef(st))
                && i.operands.get(1) == Some(&Operand::LiteralBit32(member))
                && i.operands.get(2) == Some(&Operand::Decoration(Decoration::Offset)))
            .then(|| i.operands.get(3).and_then(|o| word(o).ok()))
            .flatten()
        })
    }

    fn constant(&self, id: u32) -> Result<String, String> {
        let c = self.def(id)?;
        match c.class.opcode {
            Op::Constant | Op::SpecConstant => Ok(c.operands.iter().map(|o| format!("{o}")).collect::<Vec<_>>().join(" ")),
            Op::ConstantTrue | Op::SpecConstantTrue => Ok("true".into()),
            Op::ConstantFalse | Op::SpecConstantFalse => Ok("false".into()),
            op => Ok(format!("{op:?}")),
        }
    }

    fn ty(&self, id: u32) -> Result<String, String> {
        let t = self.def(id)?;
        let op = |i: usize| t.operands.get(i).ok_or_else(|| format!("{:?} %{id}: operand {i} missing", t.class.opcode));
        Ok(match t.class.opcode {
            Op::TypeVoid => "void".into(),
            Op::TypeBool => "bool".into(),
            Op::TypeInt => format!("{}{}", if word(op(1)?)? == 1 { "i" } else { "u" }, word(op(0)?)?),
            Op::TypeFloat => format!("f{}", word(op(0)?)?),
            Op::TypeVector => format!("vec{}<{}>", word(op(1)?)?, self.ty(word(op(0)?)?)?),
            Op::TypeMatrix => format!("mat{}<{}>", word(op(1)?)?, self.ty(word(op(0)?)?)?),
            Op::TypeArray => format!("[{}; {}]", self.ty(word(op(0)?)?)?, self.constant(word(op(1)?)?)?),
            Op::TypeRuntimeArray => format!("[{}]", self.ty(word(op(0)?)?)?),
            Op::TypeStruct => {
                let mut s = String::from("struct{");
                for (i, m) in t.operands.iter().enumerate() {
                    let off = self.member_offset(id, i as u32).map_or(String::new(), |o| format!("@{o} "));
                    s += &format!("{}{off}{}", if i == 0 { "" } else { ", " }, self.ty(word(m)?)?);
                }
                s += "}";
                if self.decoration(id, Decoration::Block).is_some() {
                    s += " Block";
                }
                s
            }
            Op::TypePointer => format!("ptr<{:?}, {}>", op(0)?, self.ty(word(op(1)?)?)?),
            Op::TypeSampler => "sampler".into(),
            Op::TypeSampledImage => format!("sampled<{}>", self.ty(word(op(0)?)?)?),
            Op::TypeImage => {
                let rest: Vec<String> = t.operands[1..].iter().map(|o| format!("{o}")).collect();
                format!("image<{}, {}>", self.ty(word(op(0)?)?)?, rest.join(", "))
            }
            other => format!("{other:?}"),
        })
    }

    /// Type of the variable `var` points to.
    fn var_type(&self, var: &Instruction) -> Result<String, String> {
        let ptr = self.def(var.result_type.ok_or("OpVariable without a type")?)?;
        if ptr.class.opcode != Op::TypePointer {
            return Err(format!("variable type is {:?}", ptr.class.opcode));
        }
        self.ty(word(&ptr.operands[1])?)
    }
}

/// Reflects the interface of a SPIR-V module (little-endian words as bytes) with one entry point.
pub fn reflect(spirv: &[u8]) -> Result<Interface, String> {
    if !spirv.len().is_multiple_of(4) {
        return Err(format!("SPIR-V of {} bytes", spirv.len()));
    }
    let words: Vec<u32> = spirv.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let m = rspirv::dr::load_words(words).map_err(|e| format!("rspirv: {e:?}"))?;
    let defs = m.types_global_values.iter().filter_map(|i| i.result_id.map(|id| (id, i))).collect();
    let r = Reflector { m: &m, defs };
    let mut items = BTreeMap::new();
    let [ep] = m.entry_points.as_slice() else {
        return Err(format!("{} entry points", m.entry_points.len()));
    };
    let name = match ep.operands.get(2) {
        Some(Operand::LiteralString(s)) => s.clone(),
        o => return Err(format!("entry point name {o:?}")),
    };
    items.insert("entry".to_string(), format!("{} {name}", ep.operands[0]));
    let mut modes: Vec<String> =
        m.execution_modes.iter().map(|i| i.operands[1..].iter().map(|o| format!("{o}")).collect::<Vec<_>>().join(" ")).collect();
    modes.sort();
    items.insert("execution modes".to_string(), modes.join(", "));
    let mut descriptors: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let interface: Vec<u32> = ep.operands[3..].iter().map(word).collect::<Result<_, _>>()?;

    for v in m.types_global_values.iter().filter(|i| i.class.opcode == Op::Variable) {
        let id = v.result_id.ok_or("OpVariable without an id")?;
        let sc = match v.operands.first() {
            Some(Operand::StorageClass(sc)) => *sc,
            o => return Err(format!("OpVariable %{id}: storage class {o:?}")),
        };
        let lit = |d: Decoration| r.decoration(id, d).and_then(|i| i.operands.get(2)).map(|o| format!("{o}"));
        match sc {
            StorageClass::PushConstant => {
                let prev = items.insert("push_constant".to_string(), r.var_type(v)?);
                if prev.is_some() {
                    return Err("two push-constant blocks".into());
                }
            }
            StorageClass::Input | StorageClass::Output => {
                if !interface.contains(&id) {
                    continue;
                }
                let dir = if sc == StorageClass::Input { "input" } else { "output" };
                let item = match (lit(Decoration::Location), lit(Decoration::BuiltIn)) {
                    (Some(l), _) => match lit(Decoration::Component) {
                        Some(c) => format!("{dir} location={l:0>2} component={c}"),
                        None => format!("{dir} location={l:0>2}"),
                    },
                    (None, Some(b)) => format!("{dir} builtin={b}"),
                    (None, None) => format!("{dir} undecorated %{id}"),
                };
                let mut desc = r.var_type(v)?;
                for d in [Decoration::Flat, Decoration::NoPerspective, Decoration::Centroid, Decoration::Sample, Decoration::Invariant] {
                    if r.decoration(id, d).is_some() {
                        desc += &format!(" {d:?}");
                    }
                }
                if items.insert(item.clone(), desc).is_some() {
                    return Err(format!("two variables at {item}"));
                }
            }
            _ => {
                if let (Some(set), Some(binding)) = (lit(Decoration::DescriptorSet), lit(Decoration::Binding)) {
                    let item = format!("descriptor set={set} binding={binding}");
                    // Aliased bindings (several views of one heap) keep every type, sorted.
                    descriptors.entry(item).or_default().push(format!("{sc:?} {}", r.var_type(v)?));
                }
            }
        }
    }
    for (item, mut descs) in descriptors {
        descs.sort();
        items.insert(item, descs.join(" | "));
    }
    for c in m
        .types_global_values
        .iter()
        .filter(|i| matches!(i.class.opcode, Op::SpecConstant | Op::SpecConstantTrue | Op::SpecConstantFalse | Op::SpecConstantComposite))
    {
        let id = c.result_id.ok_or("spec constant without an id")?;
        if let Some(d) = r.decoration(id, Decoration::SpecId) {
            let sid = d.operands.get(2).map(word).transpose()?.ok_or("SpecId without a value")?;
            let desc = format!("{} = {}", r.ty(c.result_type.ok_or("spec constant without a type")?)?, r.constant(id)?);
            items.insert(format!("spec_id {sid}"), desc);
        }
    }
    Ok(Interface { items })
}

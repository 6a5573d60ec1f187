//! AGAL adapter of the verification harness: a tiny assembler, test programs with their inputs,
//! running them through the whole shrec pipeline (decode → lower → HLSL → DXC SPIR-V → lavapipe)
//! against the reference interpreter (`formats::agal::interp`), and a generator of random valid
//! programs for differential fuzzing.

use super::check::{self, PixelExpect, VertexExpect};
use super::vk::{self, FragmentQuad, Gpu, VertexInvocation};
use super::{Comparison, Rng};
use crate::interp::agal::{self as interp, Texture};
use shrec::formats::agal::decode::{self, DecodeOptions};
use shrec::formats::agal::lower::Layout;
use shrec::formats::agal::{self as agal_fmt, disasm};
use shrec::formats::{Stage, TranslateOptions};
use std::fmt::Write;

/// A minimal AGAL assembler in AGALMiniAssembler syntax (the syntax `disasm` prints):
/// `mov vt0.zw, vc0.xy`, `m44 op, va0, vc[va1.x+5]`, `tex ft0, v0, fs1 <cube,nearest,mipnone,clamp>`,
/// `ife vt0.x, vc1.y`, `els`, `eif`, `kil ft0.x`. Short swizzles repeat their last letter.
pub mod asm {
    use shrec::formats::agal::decode::Op;
    use shrec::formats::Stage;

    fn reg_type(name: &str) -> Result<(u32, bool), String> {
        // (type code, takes a number)
        Ok(match name {
            "va" => (0, true),
            "vc" | "fc" => (1, true),
            "vt" | "ft" => (2, true),
            "op" => (3, false),
            "oc" => (3, true),
            "v" | "vi" | "fi" | "i" => (4, true),
            "fs" | "vs" => (5, true),
            "od" | "fd" => (6, false),
            "iid" => (7, false),
            _ => return Err(format!("unknown register {name}")),
        })
    }

    /// `(type, number)` of a register name like `vt3`, `op`, `oc`, `oc2`.
    fn register(text: &str) -> Result<(u32, u32), String> {
        let split = text.find(|c: char| c.is_ascii_digit()).unwrap_or(text.len());
        let (name, num) = text.split_at(split);
        let (ty, _) = reg_type(name)?;
        let n = if num.is_empty() { 0 } else { num.parse().map_err(|_| format!("bad register number in {text}"))? };
        Ok((ty, n))
    }

    fn lane(c: char) -> Result<u64, String> {
        "xyzw".find(c).map(|i| i as u64).ok_or_else(|| format!("bad lane {c}"))
    }

    fn swizzle(text: Option<&str>) -> Result<u64, String> {
        let Some(t) = text else { return Ok(0xE4) };
        let lanes: Vec<u64> = t.chars().map(lane).collect::<Result<_, _>>()?;
        if lanes.is_empty() || lanes.len() > 4 {
            return Err(format!("bad swizzle .{t}"));
        }
        Ok((0..4).map(|i| lanes[i.min(lanes.len() - 1)] << (2 * i)).sum())
    }

    fn dest(text: &str) -> Result<u32, String> {
        let (r, m) = text.split_once('.').map_or((text, None), |(r, m)| (r, Some(m)));
        let (ty, n) = register(r)?;
        let mask = match m {
            None => 0xF,
            Some(m) => m.chars().map(|c| lane(c).map(|l| 1u32 << l)).sum::<Result<u32, _>>()?,
        };
        Ok(n | mask << 16 | ty << 24)
    }

    fn source(text: &str) -> Result<u64, String> {
        if let Some(open) = text.find('[') {
            // vc[vt1.y+3].xyzw
            let close = text.find(']').ok_or("missing ]")?;
            let (ty, _) = reg_type(&text[..open])?;
            let inner = &text[open + 1..close];
            let (index, offset) = inner.split_once('+').map_or((inner, "0"), |(a, b)| (a, b));
            let (ireg, ilane) = index.split_once('.').ok_or("indirect index needs a lane")?;
            let (ity, inum) = register(ireg)?;
            let il = lane(ilane.chars().next().ok_or("empty lane")?)?;
            let off: u64 = offset.trim().parse().map_err(|_| format!("bad offset {offset}"))?;
            let swz = swizzle(text[close + 1..].strip_prefix('.'))?;
            return Ok(u64::from(inum) | off << 16 | swz << 24 | u64::from(ty) << 32 | u64::from(ity) << 40 | il << 48 | 1 << 63);
        }
        let (r, s) = text.split_once('.').map_or((text, None), |(r, s)| (r, Some(s)));
        let (ty, n) = register(r)?;
        Ok(u64::from(n) | swizzle(s)? << 24 | u64::from(ty) << 32)
    }

    fn sampler(reg: &str, opts: &str) -> Result<u64, String> {
        let (ty, n) = register(reg)?;
        let mut w = u64::from(n) | u64::from(ty) << 32;
        for o in opts.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            let (shift, v) = match o {
                "2d" => (44, 0),
                "cube" => (44, 1),
                "3d" => (44, 2),
                "nearest" => (60, 0),
                "linear" => (60, 1),
                "mipnone" | "nomip" => (56, 0),
                "mipnearest" => (56, 1),
                "miplinear" => (56, 2),
                "clamp" => (52, 0),
                "repeat" | "wrap" => (52, 1),
                "rgba" => (40, 0),
                "dxt1" => (40, 1),
                "dxt5" => (40, 2),
                "centroid" => (48, 1),
                "single" => (48, 2),
                "ignoresampler" => (48, 4),
                bias => {
                    let b: f32 = bias.parse().map_err(|_| format!("unknown sampler option {bias}"))?;
                    w |= u64::from((b * 8.0) as i8 as u8) << 16;
                    continue;
                }
            };
            w = (w & !(0xF << shift)) | v << shift;
        }
        Ok(w)
    }

    /// Assembles one instruction into its 24-byte token.
    pub fn token(line: &str) -> Result<[u8; 24], String> {
        let line = line.trim();
        let (op, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let info = Op::from_name(op).ok_or_else(|| format!("unknown opcode {op}"))?.info();
        let (operands, samp_opts) = match rest.find('<') {
            Some(i) => (&rest[..i], Some(rest[i + 1..].trim_end().trim_end_matches('>'))),
            None => (rest, None),
        };
        let ops: Vec<&str> = operands.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        let mut it = ops.into_iter();
        let mut next = || it.next().ok_or_else(|| format!("missing operand in `{line}`"));
        let d = if info.has_dest { dest(next()?)? } else { 0 };
        let s1 = if info.sources >= 1 { source(next()?)? } else { 0 };
        let s2 = if info.sampler {
            sampler(next()?, samp_opts.unwrap_or(""))?
        } else if info.sources >= 2 {
            source(next()?)?
        } else {
            0
        };
        let mut t = [0u8; 24];
        t[0..4].copy_from_slice(&info.code.to_le_bytes());
        t[4..8].copy_from_slice(&d.to_le_bytes());
        t[8..16].copy_from_slice(&s1.to_le_bytes());
        t[16..24].copy_from_slice(&s2.to_le_bytes());
        Ok(t)
    }

    /// Assembles a program: header + one token per non-empty line (`//` starts a comment).
    pub fn assemble(version: u32, stage: Stage, text: &str) -> Result<Vec<u8>, String> {
        let mut out = vec![0xA0];
        out.extend_from_slice(&version.to_le_bytes());
        out.push(0xA1);
        out.push(if stage == Stage::Pixel { 1 } else { 0 });
        for line in text.lines() {
            let line = line.split("//").next().unwrap_or("").trim();
            if !line.is_empty() {
                out.extend_from_slice(&token(line).map_err(|e| format!("{e} (in `{line}`)"))?);
            }
        }
        Ok(out)
    }
}

/// One invocation of a test program: a vertex (attributes) or a fragment quad (varyings with
/// their per-pixel slopes), with its constants.
#[derive(Clone, Debug, Default)]
pub struct Case {
    /// `vc` / `fc` registers from 0 (the rest read 0).
    pub constants: Vec<[f32; 4]>,
    /// Vertex programs: `va0..`.
    pub attributes: Vec<[f32; 4]>,
    /// Fragment programs: `v0..v9` at the quad's top-left pixel, and their change per pixel to
    /// the right (`slope_x`) and down (`slope_y`). Keep them dyadic (see [`vk::FragmentQuad`]).
    pub varyings: Vec<[f32; 4]>,
    pub slope_x: Vec<[f32; 4]>,
    pub slope_y: Vec<[f32; 4]>,
}

/// A program with its inputs.
#[derive(Clone, Debug)]
pub struct TestProgram {
    /// Shown in reports.
    pub name: String,
    pub bytes: Vec<u8>,
    pub cases: Vec<Case>,
    /// `textures[i]` is bound to `fs{i}`.
    pub textures: Vec<Option<Texture>>,
    /// A command that reruns this program alone.
    pub reproduce: String,
}

/// Options of a verification run.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    pub translate: TranslateOptions,
    /// The SPIR-V back end; `None`: `SHREC_VERIFY_SPIRV_BACKEND` ([`check::backend_from_env`]).
    pub spirv_backend: Option<shrec::build::SpirvBackend>,
}

fn fmt_vec(v: &[f32; 4]) -> String {
    format!("({:?}, {:?}, {:?}, {:?})", v[0], v[1], v[2], v[3])
}

/// Runs one program through shrec and the GPU, compares every output lane of every case with
/// the interpreter, and returns the counts (plus a report when something differs: disassembly,
/// the case's inputs, both outputs, and the command that reruns it).
pub fn run(gpu: &Gpu, p: &TestProgram, opts: RunOptions) -> Comparison {
    run_counted(gpu, p, opts).0
}

/// [`run`], also returning what the interpreter's control flow did over every case
/// ([`interp::FlowStats`]: branch decisions, divergent quads, kil / tex / derivatives in branches,
/// relative reads).
pub fn run_counted(gpu: &Gpu, p: &TestProgram, opts: RunOptions) -> (Comparison, interp::FlowStats) {
    let mut flow = interp::FlowStats::default();
    let cmp = run_inner(gpu, p, opts, &mut flow);
    (cmp, flow)
}

fn run_inner(gpu: &Gpu, p: &TestProgram, opts: RunOptions, flow: &mut interp::FlowStats) -> Comparison {
    let mut cmp = Comparison { programs: 1, ..Default::default() };
    let fail = |cmp: &mut Comparison, what: String| {
        cmp.mismatches += 1;
        cmp.report(format!("== {}: {what}\nreproduce: {}", p.name, p.reproduce));
    };
    let prog = match decode::decode(&p.bytes, DecodeOptions { allow_agal4: opts.translate.agal4 }) {
        Ok(x) => x,
        Err(e) => {
            fail(&mut cmp, format!("decoder rejected the program: {e}"));
            return cmp;
        }
    };
    let listing = disasm::disassemble(&prog);
    // The build's path: translate (decode + lower), then HLSL and DXC, or the direct back end.
    let compiled = agal_fmt::translate(&p.bytes, &opts.translate).map_err(|e| format!("translate: {e}")).and_then(|t| {
        let backend = opts.spirv_backend.unwrap_or_else(check::backend_from_env);
        check::spirv_with(gpu, &t.module, backend).map(|s| (t.module, s))
    });
    let (module, spirv) = match compiled {
        Ok(x) => x,
        Err(e) => {
            fail(&mut cmp, format!("{e}\n{listing}"));
            return cmp;
        }
    };
    let iopts = interp::Options { ifg_strict: opts.translate.agal_ifg_strict };
    // Texture i of the module is bound to slot fs{n} / vs{n} (binding base + n).
    let base = if prog.stage == Stage::Vertex { Layout::VK_VERTEX_TEXTURE_BASE } else { Layout::VK_TEXTURE_BASE };
    let textures = check::texture_specs(&module, |i| {
        let t = &module.textures[i];
        let cube = t.dim == shrec::ir::TexDim::Cube;
        // bound as the module declares it (contents of the other kind: a dummy)
        match p.textures.get((t.texture_binding.vk_binding - base) as usize).cloned().flatten() {
            Some(tex) if tex.cube == cube => (tex.size, tex.texels),
            _ => (1, vec![[0.0; 4]; if cube { 6 } else { 1 }]),
        }
    });
    let constants = |c: &Case| vec![c.constants.iter().take(module.const_buffers[0].len as usize).copied().collect::<Vec<_>>()];
    let mut executed = std::collections::BTreeSet::new();
    let outcome = if prog.stage == Stage::Vertex {
        let invocations = p
            .cases
            .iter()
            .map(|c| VertexInvocation { attributes: c.attributes.iter().enumerate().map(|(l, a)| (l as u32, *a)).collect(), uniforms: constants(c) })
            .collect();
        check::vertex(gpu, &module, &spirv, textures, invocations, &mut |i| {
            let c = &p.cases[i];
            let r = interp::run_vertex(&prog, &c.attributes, &c.constants, &p.textures, iopts);
            executed.extend(r.executed);
            flow.merge(&r.flow);
            VertexExpect { position: r.position, varyings: r.varyings }
        })
    } else {
        let quads = p
            .cases
            .iter()
            .map(|c| FragmentQuad { base: c.varyings.clone(), slope_x: c.slope_x.clone(), slope_y: c.slope_y.clone(), uniforms: constants(c) })
            .collect();
        check::fragment(gpu, &module, &spirv, textures, quads, &mut |i, quad| {
            let varyings: [[[f32; 4]; 10]; 4] = std::array::from_fn(|px| std::array::from_fn(|l| quad.pixel_varying(l, px)));
            let r = interp::run_fragment(&prog, &varyings, &p.cases[i].constants, &p.textures, iopts);
            executed.extend(r.executed);
            flow.merge(&r.flow);
            r.pixels.map(|px| PixelExpect { written: px.written, colors: px.colors.to_vec(), depth: px.depth })
        })
    };
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            fail(&mut cmp, format!("GPU run failed: {e}\n{listing}"));
            return cmp;
        }
    };
    cmp.merge(outcome.cmp);
    cmp.opcodes.extend(executed.iter().map(|s| s.to_string()));
    if let Some((ci, lanes)) = outcome.first_mismatch {
        let c = &p.cases[ci];
        let mut inputs = String::new();
        let (cname, vertex) = if prog.stage == Stage::Vertex { ("vc", true) } else { ("fc", false) };
        if vertex {
            for (i, a) in c.attributes.iter().enumerate() {
                let _ = writeln!(inputs, "  va{i} = {}", fmt_vec(a));
            }
        } else {
            let _ = writeln!(inputs, "  (varyings at the quad's top-left pixel; dx/dy = change per pixel right/down)");
            for l in 0..c.varyings.len() {
                let g = |v: &Vec<[f32; 4]>| v.get(l).copied().unwrap_or([0.0; 4]);
                let _ = writeln!(inputs, "  v{l} = {} dx {} dy {}", fmt_vec(&g(&c.varyings)), fmt_vec(&g(&c.slope_x)), fmt_vec(&g(&c.slope_y)));
            }
        }
        for (i, a) in c.constants.iter().enumerate() {
            let _ = writeln!(inputs, "  {cname}{i} = {}", fmt_vec(a));
        }
        cmp.report(format!(
            "== {} ({})\n{listing}case {ci}: mismatching lanes:\n{lanes}inputs:\n{inputs}reproduce: {}",
            p.name, gpu.device_name, p.reproduce
        ));
    }
    cmp
}

/// Random valid AGAL programs with inputs in safe ranges (differential fuzzing).
pub mod gen {
    use super::*;

    /// Command that reruns program `index` of `seed` (printed in mismatch reports).
    pub fn reproduce_command(seed: u64, index: u64) -> String {
        format!("SHREC_FUZZ_SEED={seed} SHREC_FUZZ_ONLY={index} cargo test --release --test verify_agal -- --ignored fuzz_one --nocapture")
    }

    const LANES: [char; 4] = ['x', 'y', 'z', 'w'];

    /// Texture slots the generator binds: fs0 2d 4×4, fs1 cube 4×4, fs2 2d 8×8.
    pub fn textures(rng: &mut Rng) -> Vec<Option<Texture>> {
        let mut make = |cube: bool, size: u32| {
            let n = (size * size * if cube { 6 } else { 1 }) as usize;
            Some(Texture { cube, size, texels: (0..n).map(|_| std::array::from_fn(|_| rng.dyadic(3, 8))).collect() })
        };
        vec![make(false, 4), make(true, 4), make(false, 8)]
    }

    struct G<'r> {
        rng: &'r mut Rng,
        vertex: bool,
        version: u32,
        lines: Vec<String>,
        /// Temps that are fully written (readable).
        ready: Vec<u32>,
        temps: u32,
        depth: usize,
        /// ddx/ddy must come before any kil (derivatives of discarded neighbours are undefined).
        killed: bool,
        max_ops: usize,
    }

    impl G<'_> {
        fn t(&self) -> &'static str {
            if self.vertex {
                "vt"
            } else {
                "ft"
            }
        }
        fn c(&self) -> &'static str {
            if self.vertex {
                "vc"
            } else {
                "fc"
            }
        }
        fn swz(&mut self) -> String {
            match self.rng.below(4) {
                0 => String::new(),
                1 => format!(".{}", LANES[self.rng.below(4) as usize]),
                _ => {
                    let s: String = (0..4).map(|_| LANES[self.rng.below(4) as usize]).collect();
                    format!(".{s}")
                }
            }
        }
        fn mask(&mut self, allowed: u8) -> String {
            loop {
                let m = (self.rng.below(15) + 1) as u8 & allowed;
                if m != 0 {
                    if m == 0xF {
                        return String::new();
                    }
                    return format!(".{}", (0..4).filter(|i| m >> i & 1 == 1).map(|i| LANES[i]).collect::<String>());
                }
            }
        }
        /// A readable non-constant source register (no swizzle).
        fn reg(&mut self) -> String {
            let pick_temp = !self.ready.is_empty() && self.rng.chance(55);
            if pick_temp {
                let t = *self.rng.pick(&self.ready);
                format!("{}{t}", self.t())
            } else if self.vertex {
                format!("va{}", self.rng.below(4))
            } else {
                format!("v{}", self.rng.below(6))
            }
        }
        fn constant(&mut self) -> String {
            let n = self.rng.below(if self.vertex { 24 } else { 16 });
            format!("{}{n}", self.c())
        }
        /// Two sources, at most one constant; in vertex programs sometimes an indirect constant.
        fn sources(&mut self, n: usize) -> Vec<String> {
            let mut out = Vec::new();
            let const_at = if self.rng.chance(40) { Some(self.rng.below(n as u64) as usize) } else { None };
            for i in 0..n {
                let base = if Some(i) == const_at {
                    if self.vertex && self.rng.chance(35) {
                        self.indirect(0)
                    } else {
                        self.constant()
                    }
                } else {
                    self.reg()
                };
                let s = self.swz();
                out.push(format!("{base}{s}"));
            }
            out
        }
        /// `vc[index+off]` with an integer-valued index: va7 (attribute), vc0 or vt7 (copied from va7).
        fn indirect(&mut self, rows: u64) -> String {
            let l = LANES[self.rng.below(4) as usize];
            let index = match self.rng.below(3) {
                0 => format!("va7.{l}"),
                1 => format!("vc0.{l}"),
                _ => {
                    if !self.ready.contains(&7) {
                        return format!("vc[va7.{l}+{}]", self.rng.below(8));
                    }
                    format!("vt7.{l}")
                }
            };
            // Index values are in 0..=15; constants 0..=31 are set.
            format!("vc[{index}+{}]", self.rng.below(16 - rows))
        }
        fn dest(&mut self, allowed: u8) -> String {
            // Write a ready temp (any mask), or make a new one ready (full mask).
            // vt7 is reserved for indices in vertex programs.
            let fresh: Vec<u32> = (0..self.temps).filter(|&t| !self.ready.contains(&t) && (!self.vertex || t != 7)).collect();
            if self.depth == 0 && allowed == 0xF && !fresh.is_empty() && (self.ready.len() < 2 || self.rng.chance(25)) {
                let t = *self.rng.pick(&fresh);
                self.ready.push(t);
                return format!("{}{t}", self.t());
            }
            let writable: Vec<u32> = self.ready.iter().copied().filter(|&t| !(self.vertex && t == 7)).collect();
            if writable.is_empty() {
                // Nothing ready yet (inside a block): write a fresh temp with all lanes but do not
                // mark it ready (it may not be written on every path).
                let m = self.mask(allowed);
                return format!("{}{}{m}", self.t(), fresh.first().copied().unwrap_or(0));
            }
            let t = *self.rng.pick(&writable);
            let m = self.mask(allowed);
            format!("{}{t}{m}", self.t())
        }

        fn instruction(&mut self) {
            use crate::interp::agal::{shape, Shape};
            use shrec::formats::agal::decode::Op;
            // Every lane-wise and dot opcode the decoder knows, from its table (a new one is
            // generated as soon as the interpreter gives it a shape).
            let of = |want: &[Shape]| -> Vec<&'static str> { Op::ALL.iter().filter(|o| want.contains(&shape(**o))).map(|o| o.name()).collect() };
            let unary = of(&[Shape::Unary]);
            let binary = of(&[Shape::Binary, Shape::Dot]);
            let roll = self.rng.below(100);
            let v2 = self.version >= 2;
            if v2 && roll < 8 && self.depth < 3 && self.lines.len() + 4 < self.max_ops {
                // if block
                let op = *self.rng.pick(&["ife", "ine", "ifg", "ifl"]);
                let s = self.sources(2);
                self.lines.push(format!("{op} {}, {}", s[0], s[1]));
                self.depth += 1;
                let n = self.rng.range(1, 3);
                for _ in 0..n {
                    self.instruction();
                }
                if self.rng.chance(50) {
                    self.lines.push("els".into());
                    for _ in 0..self.rng.range(1, 3) {
                        self.instruction();
                    }
                }
                self.depth -= 1;
                self.lines.push("eif".into());
                return;
            }
            if !self.vertex && roll < 16 {
                let coord_swz = self.swz();
                let (slot, opts) = match self.rng.below(3) {
                    0 => (0, "2d,nearest,mipnone,clamp"),
                    1 => (1, "cube,nearest,mipnone,clamp"),
                    _ => (2, "2d,linear,miplinear,repeat,-0.5"),
                };
                // Coordinates: the texel-centre varyings v6 (2d) / v7 (cube) mostly, any value otherwise.
                let coord = if self.rng.chance(75) { format!("v{}{coord_swz}", if slot == 1 { 7 } else { 6 }) } else { self.sources(1).remove(0) };
                let d = self.dest(0xF);
                self.lines.push(format!("tex {d}, {coord}, fs{slot} <{opts}>"));
                return;
            }
            if !self.vertex && roll < 20 && v2 && self.depth == 0 && !self.killed {
                let op = if self.rng.chance(50) { "ddx" } else { "ddy" };
                let s = self.sources(1);
                let d = self.dest(0xF);
                self.lines.push(format!("{op} {d}, {}", s[0]));
                return;
            }
            if !self.vertex && roll < 23 {
                let s = self.sources(1);
                self.lines.push(format!("kil {}", s[0]));
                self.killed = true;
                return;
            }
            if roll < 31 {
                let op = *self.rng.pick(&["m33", "m34", "m44", "nrm", "crs"]);
                let xyz = if op == "m44" { 0xF } else { 0x7 };
                match op {
                    "nrm" => {
                        let s = self.sources(1);
                        let d = self.dest(xyz);
                        self.lines.push(format!("nrm {d}, {}", s[0]));
                    }
                    "crs" => {
                        let s = self.sources(2);
                        let d = self.dest(xyz);
                        self.lines.push(format!("crs {d}, {}, {}", s[0], s[1]));
                    }
                    _ => {
                        let rows = if op == "m44" { 4 } else { 3 };
                        let v = format!("{}{}", self.reg(), self.swz());
                        let m = if self.vertex && self.rng.chance(40) {
                            self.indirect(rows)
                        } else {
                            format!("{}{}", self.c(), self.rng.below(if self.vertex { 20 } else { 12 }))
                        };
                        let d = self.dest(xyz);
                        self.lines.push(format!("{op} {d}, {v}, {m}"));
                    }
                }
                return;
            }
            if roll < 60 {
                let op = *self.rng.pick(&unary);
                let s = self.sources(1);
                let d = self.dest(0xF);
                self.lines.push(format!("{op} {d}, {}", s[0]));
            } else {
                let op = *self.rng.pick(&binary);
                let s = self.sources(2);
                let d = self.dest(0xF);
                self.lines.push(format!("{op} {d}, {}, {}", s[0], s[1]));
            }
        }

        /// Writes every lane of `reg` in one to three instructions with disjoint masks.
        fn fill(&mut self, reg: &str) {
            let parts: Vec<u8> = match self.rng.below(3) {
                0 => vec![0xF],
                1 => {
                    let m = (self.rng.below(14) + 1) as u8;
                    vec![m, 0xF & !m]
                }
                _ => vec![0x1, 0x2, 0xC],
            };
            for m in parts {
                let mask =
                    if m == 0xF { String::new() } else { format!(".{}", (0..4).filter(|i| m >> i & 1 == 1).map(|i| LANES[i]).collect::<String>()) };
                let op = *self.rng.pick(&["mov", "add", "mul", "sat", "max", "sub", "frc"]);
                let s = self.sources(if matches!(op, "mov" | "sat" | "frc") { 1 } else { 2 });
                self.lines.push(format!("{op} {reg}{mask}, {}", s.join(", ")));
            }
        }
    }

    /// Program `index` of the fuzzing run `seed`: a random valid AGAL1/AGAL2 program (vertex or
    /// fragment) with 4 random cases.
    pub fn program(seed: u64, index: u64) -> TestProgram {
        let mut rng = Rng::new(seed.wrapping_mul(0x100_0000_01B3) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let vertex = rng.chance(50);
        let version = if rng.chance(30) { 1 } else { 2 };
        let limits = decode::limits(version);
        let max_ops = rng.range(4, 36) as usize;
        let mut g = G {
            rng: &mut rng,
            vertex,
            version,
            lines: Vec::new(),
            ready: Vec::new(),
            temps: limits.temporaries.min(12),
            depth: 0,
            killed: false,
            max_ops,
        };
        if vertex && g.rng.chance(40) {
            g.lines.push("mov vt7, va7".into());
            g.ready.push(7);
        }
        while g.lines.len() < max_ops {
            g.instruction();
        }
        let mut outputs: Vec<String> = Vec::new();
        if vertex {
            outputs.push("op".into());
            for v in 0..limits.varyings {
                if g.rng.chance(40) {
                    outputs.push(format!("v{v}"));
                }
            }
        } else {
            outputs.push("oc0".into());
            if version >= 2 {
                for o in 1..4 {
                    if g.rng.chance(25) {
                        outputs.push(format!("oc{o}"));
                    }
                }
            }
        }
        for o in &outputs {
            let name = if o == "oc0" && version == 1 { "oc".to_string() } else { o.clone() };
            g.fill(&name);
        }
        if !vertex && version >= 2 && g.rng.chance(20) {
            let s = g.sources(1);
            g.lines.push(format!("sat od, {}", s[0]));
        }
        let text = g.lines.join("\n");
        let stage = if vertex { Stage::Vertex } else { Stage::Pixel };
        let bytes = asm::assemble(version, stage, &text).unwrap_or_else(|e| panic!("generator produced invalid assembly: {e}\n{text}"));
        let textures = if vertex { Vec::new() } else { textures(&mut rng) };
        let derivative = !vertex && rng.chance(60);
        let cases = (0..4).map(|_| random_case(&mut rng, vertex, derivative)).collect();
        TestProgram { name: format!("fuzz seed {seed} program {index}"), bytes, cases, textures, reproduce: reproduce_command(seed, index) }
    }

    /// Random inputs in safe ranges: dyadic values in (-4, 4) with 6 fractional bits (or, for a
    /// quarter of the cases, values from {-1, -0.5, 0, 0.5, 1, 2}); vertex
    /// `va7` and `vc0` hold register indices 0..=15 (some ±0.25 off to exercise rounding);
    /// fragment `v6` holds 2d texel centres and `v7` cube directions with a clear major axis.
    pub fn random_case(rng: &mut Rng, vertex: bool, derivative: bool) -> Case {
        // A quarter of the cases draw from a few values so that equality (seq, sne, ife, ine),
        // zero (sgn) and repeated operands happen often.
        let few = rng.chance(25);
        let v4 = |rng: &mut Rng| -> [f32; 4] {
            std::array::from_fn(|_| if few { *rng.pick(&[-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]) } else { rng.dyadic(2, 6) })
        };
        let index = |rng: &mut Rng| -> [f32; 4] { std::array::from_fn(|_| rng.range(0, 15) as f32 + *rng.pick(&[0.0, 0.0, 0.25, -0.25])) };
        let mut c = Case::default();
        let nconst = if vertex { 32 } else { 16 };
        c.constants = (0..nconst).map(|_| v4(rng)).collect();
        if vertex {
            c.constants[0] = index(rng);
            c.attributes = (0..8).map(|_| v4(rng)).collect();
            c.attributes[7] = index(rng);
        } else {
            c.varyings = (0..10).map(|_| v4(rng)).collect();
            c.slope_x = vec![[0.0; 4]; 10];
            c.slope_y = vec![[0.0; 4]; 10];
            if derivative {
                for l in 0..6 {
                    for k in 0..4 {
                        c.slope_x[l][k] = *rng.pick(&[0.0, 0.25, -0.5, 1.0, 2.0]);
                        c.slope_y[l][k] = *rng.pick(&[0.0, 0.125, 0.5, -1.0, 4.0]);
                    }
                }
            }
            // 2d texel centres: (i + 0.5) / 8 covers both 4×4 and 8×8 textures; one texel per pixel.
            c.varyings[6] = [(rng.range(0, 5) as f32 + 0.5) / 8.0, (rng.range(0, 5) as f32 + 0.5) / 8.0, rng.dyadic(2, 4), rng.dyadic(2, 4)];
            c.slope_x[6] = [0.125, 0.0, 0.0, 0.0];
            c.slope_y[6] = [0.0, 0.125, 0.0, 0.0];
            let mut dir = [rng.dyadic(0, 4) * 0.5, rng.dyadic(0, 4) * 0.5, if rng.chance(50) { 1.0 } else { -1.0 }, rng.dyadic(1, 4)];
            dir.swap(2, rng.below(3) as usize);
            c.varyings[7] = dir;
        }
        c
    }
}

/// Convenience for tests: the shared GPU (see [`vk::require`]).
pub fn gpu() -> Option<&'static Gpu> {
    vk::require()
}

//! Statements and conditions: assignments as component writes (or a lane select where the
//! register must stay a whole vector), control flow, discards, geometry-stage stores.
use super::text::*;
use super::Writer;
use crate::ir::*;

impl Writer<'_> {
    pub(super) fn block(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    pub(super) fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign { dst, value, saturate } => {
                let full = |w: &Self| {
                    let v = w.expr(value);
                    if *saturate {
                        format!("saturate({v})")
                    } else {
                        v
                    }
                };
                let target = self.reg(&dst.reg);
                if dst.mask & 0xF == 0xF {
                    let v = full(self);
                    self.line(format!("{target} = {v};"));
                } else if !self.is_variable(&dst.reg) && dst.mask.count_ones() == 1 {
                    // a component write of a scalar: `R1.x = R130.y * 2.0;`
                    let l = dst.mask.trailing_zeros() as u8;
                    let mut v = self.lane(value, l);
                    if *saturate {
                        v = format!("saturate({v})");
                    }
                    self.line(format!("{target}.{} = {v};", LANES[l as usize]));
                } else if let (false, Expr::Compose(parts)) = (dst.mask.count_ones() == 1, value) {
                    // lanes composed one by one: `R1.xy = float2(a, b);`
                    let picked: Vec<&Expr> = (0..4).filter(|i| dst.mask >> i & 1 == 1).map(|i| &parts[i]).collect();
                    let mut v = self.composed(&picked);
                    if *saturate {
                        v = format!("saturate({v})");
                    }
                    self.line(format!("{target}.{} = {v};", mask_text(dst.mask)));
                } else if self.is_variable(&dst.reg) && dst.mask.count_ones() == 1 {
                    // One lane of a register variable: a whole-vector select, not `r.x = …`,
                    // which DXC's SPIR-V front end writes through an OpAccessChain (see
                    // `is_variable`).
                    let lanes: Vec<&str> = (0..4).map(|i| if dst.mask >> i & 1 == 1 { "1" } else { "0" }).collect();
                    let v = full(self);
                    self.line(format!("{target} = select(bool4({}), {v}, {target});", lanes.join(", ")));
                } else {
                    let mk = mask_text(dst.mask);
                    let mut v = self.masked(value, dst.mask);
                    if *saturate {
                        v = format!("saturate({v})");
                    }
                    self.line(format!("{target}.{mk} = {v};"));
                }
            }
            Stmt::If { cond, then_body, else_body } => {
                let c = self.cond(cond);
                self.line(format!("[branch] if ({c})"));
                self.line("{");
                self.indent += 1;
                self.block(then_body);
                self.indent -= 1;
                self.line("}");
                if !else_body.is_empty() {
                    self.line("else");
                    self.line("{");
                    self.indent += 1;
                    self.block(else_body);
                    self.indent -= 1;
                    self.line("}");
                }
            }
            Stmt::Loop { body } => {
                self.line("[loop] while (true)");
                self.line("{");
                self.indent += 1;
                self.block(body);
                self.indent -= 1;
                self.line("}");
            }
            Stmt::Break => self.line("break;"),
            Stmt::Continue => self.line("continue;"),
            Stmt::Return => self.line("return;"),
            Stmt::Discard(Cond::AnyNegative(e)) => {
                let e = self.exact_operand(e);
                self.line(format!("clip({e});"));
            }
            Stmt::Discard(c) => {
                let c = self.cond(c);
                self.line(format!("if ({c}) discard;"));
            }
            Stmt::SetInt { var, index, value } => {
                let name = &self.m.ext.int_vars[*var as usize].name;
                let v = self.iexpr(value);
                match index {
                    None => self.line(format!("{name} = {v};")),
                    Some(i) => {
                        let i = self.iexpr(i);
                        self.line(format!("{name}[{i}] = {v};"))
                    }
                }
            }
            Stmt::GsStore(slot) => {
                let slot = self.iexpr(slot);
                let fields: Vec<String> = self.m.outputs.iter().map(|v| format!("o.{0} = {0};", v.name)).collect();
                self.line(format!("{{ ShaderOutput o; {} shrec_gs_buf[{slot}] = o; }}", fields.join(" ")));
            }
            Stmt::GsEmitTriangle { invert } => {
                let max = self.m.ext.geometry.as_ref().map_or(0, |g| g.max_vertices);
                let c = self.cond(invert);
                self.line(format!("if (shrec_gs_emitted + 3 <= {max})"));
                self.line("{");
                self.indent += 1;
                self.line(format!("int first = ({c}) ? 1 : 0;"));
                self.line("shrec_stream.Append(shrec_gs_buf[first]);");
                self.line("shrec_stream.Append(shrec_gs_buf[1 - first]);");
                self.line("shrec_stream.Append(shrec_gs_buf[2]);");
                self.line("shrec_stream.RestartStrip();");
                self.line("shrec_gs_emitted += 3;");
                self.indent -= 1;
                self.line("}");
            }
            Stmt::GsEmitVertex => {
                let max = self.m.ext.geometry.as_ref().map_or(0, |g| g.max_vertices);
                let fields: Vec<String> = self.m.outputs.iter().map(|v| format!("o.{0} = {0};", v.name)).collect();
                self.line(format!("if (shrec_gs_emitted < {max})"));
                self.line("{");
                self.indent += 1;
                self.line(format!("ShaderOutput o; {}", fields.join(" ")));
                self.line("shrec_stream.Append(o);");
                self.line("shrec_gs_emitted += 1;");
                self.indent -= 1;
                self.line("}");
            }
            Stmt::GsCutStrip => self.line("shrec_stream.RestartStrip();"),
            Stmt::LocalStore { index, mask, value } => {
                let len = self.m.ext.local_array;
                let (i, v) = (self.index(index), self.expr(value));
                let mk = mask_text(*mask);
                match index {
                    // a fixed element (GX2 scratch): a plain store, or nothing outside the array
                    Index::Fixed(k) if *k < len => self.line(format!("shrec_local[{k}].{mk} = ({v}).{mk};")),
                    Index::Fixed(_) => {}
                    _ => self.line(format!("{{ int li = {i}; if (li >= 0 && li < {len}) shrec_local[li].{mk} = ({v}).{mk}; }}")),
                }
            }
            Stmt::XenosMemExport { address, value, element } => {
                let (a, v) = (self.expr(address), self.expr(value));
                self.line(format!("shrec_xenos_memexport(asuint({a}), {v}, {element}u);"));
            }
            Stmt::LocalLoad { dst, index } => {
                let len = self.m.ext.local_array;
                let i = self.index(index);
                let target = self.reg(&dst.reg);
                let mk = mask_text(dst.mask);
                if let Index::Fixed(k) = index {
                    let element = if *k < len { format!("shrec_local[{k}]") } else { "float4(0, 0, 0, 0)".into() };
                    self.line(format!("{target}.{mk} = {element}.{mk};"));
                } else {
                    // clamp first: both sides of ?: are evaluated
                    self.line(format!(
                        "{{ int li = {i}; float4 lv = shrec_local[clamp(li, 0, {})]; {target}.{mk} = (li >= 0 && li < {len}) ? lv.{mk} : float4(0, 0, 0, 0).{mk}; }}",
                        len - 1
                    ));
                }
            }
            Stmt::Comment(text) => {
                for l in text.lines() {
                    self.line(format!("// {l}"));
                }
            }
        }
    }

    pub(super) fn cond(&self, c: &Cond) -> String {
        let lane_x = |e: &Expr| self.lane_x_of(e, Self::exact_operand);
        match c {
            Cond::Compare(CmpOp::Ne, a, b) => format!("!({} == {})", lane_x(a), lane_x(b)),
            Cond::Compare(op, a, b) => {
                let op = cmp_text(*op);
                format!("{} {op} {}", lane_x(a), lane_x(b))
            }
            Cond::AnyNegative(e) => format!("any(({}) < 0.0)", self.exact_operand(e)),
            Cond::Not(c) => format!("!({})", self.cond(c)),
            Cond::BitSet { value, bit } => format!("((asuint(({}).x) >> {bit}u) & 1u) != 0u", self.expr(value)),
            Cond::IntCmp(op, a, b) => format!("({} {} {})", self.iexpr(a), cmp_text(*op), self.iexpr(b)),
            Cond::And(a, b) => format!("(({}) && ({}))", self.cond(a), self.cond(b)),
            Cond::Or(a, b) => format!("(({}) || ({}))", self.cond(a), self.cond(b)),
        }
    }

    /// The text of a compared float operand: a register read or a literal as it is, anything
    /// computed as a `precise` local, declared by the next `line` (just before the statement
    /// that compares it). `precise` registers mark only the operations whose value flows into
    /// them, and a comparison ends that flow: without the local, `select(x - 1.0 <= 0.0, …)` or
    /// the Xenos alpha test `oC0.w - g_AlphaThreshold < 0` would be left for the driver to
    /// rewrite (tests/integration/host_evaluation.rs).
    pub(super) fn exact_operand(&self, e: &Expr) -> String {
        let value = self.expr(e);
        if literal_of(e).is_some() || is_plain_read(e) {
            return value;
        }
        let n = self.precise_locals.get();
        self.precise_locals.set(n + 1);
        self.pending_locals.borrow_mut().push(format!("precise float4 shrec_operand{n} = {value};"));
        format!("shrec_operand{n}")
    }
}

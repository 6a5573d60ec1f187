//! Geometry-shader jobs: the shader under test is the geometry stage of a draw whose vertex stage
//! is a harness pass-through shader; what it emits is captured with VK_EXT_transform_feedback
//! (lavapipe implements it), so the emitted vertices — their number, order and every lane — are
//! observed exactly as the rasteriser would receive them.
//!
//! DXC cannot declare transform-feedback outputs from HLSL, so `capture_outputs` adds them to
//! the SPIR-V: the `TransformFeedback` capability, the `Xfb` execution mode and, on every output
//! variable, `XfbBuffer 0`, `XfbStride`, `Offset`. Those are decorations only: the instructions
//! of the module under test are not touched. One invocation = one primitive drawn inside its own
//! transform-feedback range (its own buffer slice, sized for `[maxvertexcount]` vertices, and its
//! own counter-buffer word, which receives the bytes written).

use super::{Gpu, Scratch, UniformSpec};
use ash::vk;
use std::ffi::CStr;

/// Whether the device has VK_EXT_transform_feedback with the `transformFeedback` feature.
pub fn supported(instance: &ash::Instance, physical: vk::PhysicalDevice) -> bool {
    // SAFETY: plain queries on a live instance.
    let exts = unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
    let name = ash::ext::transform_feedback::NAME;
    // SAFETY: Vulkan fills each extension name array with a NUL-terminated string.
    if !exts.iter().any(|e| unsafe { CStr::from_ptr(e.extension_name.as_ptr()) } == name) {
        return false;
    }
    let mut f = vk::PhysicalDeviceTransformFeedbackFeaturesEXT::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f);
    // SAFETY: plain queries on a live instance and one of its physical devices.
    unsafe { instance.get_physical_device_features2(physical, &mut f2) };
    f.transform_feedback == vk::TRUE
}

const OP_CAPABILITY: u32 = 17;
const OP_ENTRY_POINT: u32 = 15;
const OP_EXECUTION_MODE: u32 = 16;
const OP_DECORATE: u32 = 71;
const OP_VARIABLE: u32 = 59;
const STORAGE_OUTPUT: u32 = 3;
const DEC_BUILTIN: u32 = 11;
const DEC_LOCATION: u32 = 30;
const DEC_OFFSET: u32 = 35;
const DEC_XFB_BUFFER: u32 = 36;
const DEC_XFB_STRIDE: u32 = 37;
const BUILTIN_POSITION: u32 = 0;
const CAP_TRANSFORM_FEEDBACK: u32 = 53;
const MODE_XFB: u32 = 11;

/// Adds transform-feedback capture of every output variable (all float4) of a SPIR-V geometry
/// shader: the `Position` built-in first, then by location, 16 bytes each. Returns the patched
/// module and the number of captured float4 per vertex.
pub fn capture_outputs(spirv: &[u8]) -> Result<(Vec<u8>, u32), String> {
    if !spirv.len().is_multiple_of(4) || spirv.len() < 20 {
        return Err("SPIR-V length is not a multiple of 4".into());
    }
    let w: Vec<u32> = spirv.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let (mut after_caps, mut after_entries, mut first_decorate) = (5, None, None);
    let mut entry = None;
    let mut outputs = Vec::new();
    let mut position = None;
    let mut locations = std::collections::HashMap::new();
    let mut i = 5;
    while i < w.len() {
        let (op, len) = (w[i] & 0xFFFF, (w[i] >> 16) as usize);
        if len == 0 || i + len > w.len() {
            return Err(format!("malformed SPIR-V instruction at word {i}"));
        }
        match op {
            OP_CAPABILITY => after_caps = i + len,
            OP_ENTRY_POINT => {
                entry = Some(w[i + 2]);
                after_entries = Some(i + len);
            }
            OP_DECORATE => {
                first_decorate.get_or_insert(i);
                match w[i + 2] {
                    DEC_BUILTIN if len > 3 && w[i + 3] == BUILTIN_POSITION => position = Some(w[i + 1]),
                    DEC_LOCATION if len > 3 => {
                        locations.insert(w[i + 1], w[i + 3]);
                    }
                    _ => {}
                }
            }
            OP_VARIABLE if len >= 4 && w[i + 3] == STORAGE_OUTPUT => outputs.push(w[i + 2]),
            _ => {}
        }
        i += len;
    }
    let (entry, after_entries, first_decorate) = match (entry, after_entries, first_decorate) {
        (Some(e), Some(a), Some(d)) => (e, a, d),
        _ => return Err("SPIR-V without entry point or decorations".into()),
    };
    let mut keyed: Vec<(i64, u32)> = Vec::new();
    for id in outputs {
        if Some(id) == position {
            keyed.push((-1, id));
        } else if let Some(&l) = locations.get(&id) {
            keyed.push((i64::from(l), id));
        } else {
            return Err(format!("output variable %{id} has neither a location nor BuiltIn Position"));
        }
    }
    keyed.sort();
    let stride = 16 * keyed.len() as u32;
    let mut decorations = Vec::new();
    for (k, &(_, id)) in keyed.iter().enumerate() {
        for (d, v) in [(DEC_XFB_BUFFER, 0), (DEC_XFB_STRIDE, stride), (DEC_OFFSET, 16 * k as u32)] {
            decorations.extend([OP_DECORATE | 4 << 16, id, d, v]);
        }
    }
    // Insert back to front so the earlier positions stay valid.
    let mut out = w;
    out.splice(first_decorate..first_decorate, decorations);
    out.splice(after_entries..after_entries, [OP_EXECUTION_MODE | 3 << 16, entry, MODE_XFB]);
    out.splice(after_caps..after_caps, [OP_CAPABILITY | 2 << 16, CAP_TRANSFORM_FEEDBACK]);
    Ok((out.iter().flat_map(|x| x.to_le_bytes()).collect(), keyed.len() as u32))
}

/// One geometry-shader invocation: its input primitive (per vertex, attribute values by
/// location) and the contents of each uniform buffer (as [`super::VertexInvocation`]).
#[derive(Clone, Debug, Default)]
pub struct GeometryInvocation {
    pub vertices: Vec<Vec<(u32, [f32; 4])>>,
    pub uniforms: Vec<Vec<[f32; 4]>>,
}

#[derive(Clone, Debug)]
pub struct GeometryJob<'a> {
    /// Harness vertex shader passing its attributes through to the geometry stage.
    pub vs_spirv: &'a [u8],
    /// The geometry shader under test, as compiled (patched here by `capture_outputs`).
    pub gs_spirv: &'a [u8],
    pub topology: vk::PrimitiveTopology,
    /// Vertices per input primitive.
    pub vertices: u32,
    /// Vertex-shader input locations (float4 each).
    pub attribute_locations: Vec<u32>,
    /// Upper bound of vertices one invocation emits (`[maxvertexcount]`).
    pub max_vertices: u32,
    pub uniforms: Vec<UniformSpec>,
    pub invocations: Vec<GeometryInvocation>,
}

/// What one invocation emitted: triangle-list vertices, each the captured float4 outputs (the
/// `Position` built-in first, exactly as written, then by location).
#[derive(Clone, Debug)]
pub struct GeometryCapture {
    pub vertices: Vec<Vec<[f32; 4]>>,
}

impl Gpu {
    /// Whether [`Gpu::run_geometry`] is available.
    pub fn has_transform_feedback(&self) -> bool {
        self.xfb.is_some()
    }

    /// Runs a geometry shader once per invocation (one primitive each) and captures what it
    /// emits (a triangle stream).
    pub fn run_geometry(&self, job: &GeometryJob) -> Result<Vec<GeometryCapture>, String> {
        let mut s = Scratch::default();
        let r = self.run_geometry_inner(&mut s, job);
        self.destroy(s);
        r
    }

    fn run_geometry_inner(&self, s: &mut Scratch, job: &GeometryJob) -> Result<Vec<GeometryCapture>, String> {
        let xfb = self.xfb.as_ref().ok_or("the Vulkan device lacks VK_EXT_transform_feedback")?;
        let d = &self.device;
        let n = job.invocations.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let (gs_spirv, outputs) = capture_outputs(job.gs_spirv)?;
        let vstride_out = u64::from(outputs.max(1)) * 16;
        // a strip of n vertices is captured as up to 3n primitive vertices
        let region = vstride_out * u64::from(job.max_vertices.max(3)) * 3;
        let cmd = self.begin(s)?;
        let capture = self.buffer(s, region * n as u64, vk::BufferUsageFlags::TRANSFORM_FEEDBACK_BUFFER_EXT)?;
        // Per invocation, the byte count its transform-feedback range wrote (counter buffer).
        let counters = self.buffer(s, 4 * n as u64, vk::BufferUsageFlags::TRANSFORM_FEEDBACK_COUNTER_BUFFER_EXT)?;
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::GEOMETRY;
        let (sets, dynamic) = self.resources(s, &job.uniforms, &[], &[], n, cmd, stages)?;
        let k = job.vertices as usize;
        let max_loc = job.attribute_locations.iter().max().map_or(0, |&m| m as usize + 1);
        let vstride = max_loc.max(1) * 16;
        let vb = self.buffer(s, (n * k * vstride) as u64, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        for (i, inv) in job.invocations.iter().enumerate() {
            if inv.vertices.len() != k {
                return Err(format!("invocation {i}: {} vertices for a primitive of {k}", inv.vertices.len()));
            }
            for (j, attrs) in inv.vertices.iter().enumerate() {
                for &(loc, v) in attrs {
                    if (loc as usize) < max_loc {
                        self.write_f32s(s, vb, (i * k + j) * vstride + loc as usize * 16, &[v]);
                    }
                }
            }
            for &(u, buf, stride) in &dynamic {
                let data = inv.uniforms.get(u).map(Vec::as_slice).unwrap_or(&[]);
                if data.len() > job.uniforms[u].len as usize {
                    return Err(format!("invocation {i}: {} vec4s for a uniform of {}", data.len(), job.uniforms[u].len));
                }
                self.write_f32s(s, buf, i * stride as usize, data);
            }
        }
        let vs = self.module(s, job.vs_spirv)?;
        let gsm = self.module(s, &gs_spirv)?;
        self.pipeline_layout(s, None)?;
        self.vertex_geometry_pipeline(s, &[vs, gsm], &job.attribute_locations, vstride, job.topology, "geometry harness")?;
        let fp = xfb.fp();
        // SAFETY: recording into this Scratch's command buffer, between begin and submit; every handle recorded is a live handle of this Scratch.
        unsafe {
            self.begin_point_draw(s, cmd, vb);
            let xbuf = [s.buffers[capture].buffer];
            let cbuf = [s.buffers[counters].buffer];
            for i in 0..n {
                self.bind_invocation_sets(s, cmd, &sets, &dynamic, i);
                let (off, size) = ([region * i as u64], [region]);
                (fp.cmd_bind_transform_feedback_buffers_ext)(cmd, 0, 1, xbuf.as_ptr(), off.as_ptr(), size.as_ptr());
                (fp.cmd_begin_transform_feedback_ext)(cmd, 0, 0, std::ptr::null(), std::ptr::null());
                d.cmd_draw(cmd, job.vertices, 1, (i * k) as u32, 0);
                let coff = [4 * i as u64];
                (fp.cmd_end_transform_feedback_ext)(cmd, 0, 1, cbuf.as_ptr(), coff.as_ptr());
            }
            d.cmd_end_rendering(cmd);
            capture_to_host(d, cmd);
        }
        self.submit(s, cmd)?;
        let cbytes = self.read_bytes(s, counters);
        let bytes = self.read_bytes(s, capture);
        let f = |at: usize| -> [f32; 4] { std::array::from_fn(|c| f32::from_le_bytes(bytes[at + c * 4..at + c * 4 + 4].try_into().unwrap())) };
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let written = u64::from(u32::from_le_bytes(cbytes[4 * i..4 * i + 4].try_into().unwrap()));
            if written % vstride_out != 0 || written > region {
                return Err(format!("invocation {i}: transform feedback wrote {written} bytes (vertex stride {vstride_out}, range {region})"));
            }
            let verts = (written / vstride_out) as usize;
            let base = region as usize * i;
            let vertices = (0..verts).map(|v| (0..outputs as usize).map(|o| f(base + v * vstride_out as usize + o * 16)).collect()).collect();
            out.push(GeometryCapture { vertices });
        }
        Ok(out)
    }
}

/// A vertex shader whose SPIR-V declares its own transform-feedback outputs (GX2 stream-out:
/// `XfbBuffer` / `XfbStride` / `Offset` from the translation), run once per invocation.
#[derive(Clone, Debug)]
pub struct StreamOutJob<'a> {
    pub spirv: &'a [u8],
    /// Vertex-shader input locations (float4 each).
    pub attribute_locations: Vec<u32>,
    pub uniforms: Vec<UniformSpec>,
    pub invocations: Vec<super::VertexInvocation>,
    /// Record size in bytes of transform-feedback buffers 0-3 (0: not bound).
    pub strides: [u32; 4],
}

/// Every dword of every bound buffer starts as this pattern (a normal float, so that it
/// compares bit for bit): a dword the shader does not capture must still hold it.
pub const STREAM_SENTINEL: u32 = 0x3C5A_A5C3;

impl Gpu {
    /// Runs a vertex shader with its own transform-feedback outputs: invocation `i` is one point
    /// drawn with rasterisation discarded inside its own transform-feedback range, each bound
    /// buffer `b` at byte `i · strides[b]` for `strides[b]` bytes, so its record is exactly that
    /// slice. Returns, per buffer, every dword of the buffer (invocation `i`'s record at dword
    /// `i · strides[b] / 4`), unwritten dwords [`STREAM_SENTINEL`].
    pub fn run_stream_out(&self, job: &StreamOutJob) -> Result<[Vec<u32>; 4], String> {
        let mut s = Scratch::default();
        let r = self.run_stream_out_inner(&mut s, job);
        self.destroy(s);
        r
    }

    fn run_stream_out_inner(&self, s: &mut Scratch, job: &StreamOutJob) -> Result<[Vec<u32>; 4], String> {
        let xfb = self.xfb.as_ref().ok_or("the Vulkan device lacks VK_EXT_transform_feedback")?;
        let d = &self.device;
        let n = job.invocations.len();
        if n == 0 {
            return Ok(Default::default());
        }
        let cmd = self.begin(s)?;
        let mut buffers: [Option<usize>; 4] = [None; 4];
        for (b, &stride) in job.strides.iter().enumerate() {
            if stride == 0 {
                continue;
            }
            let size = u64::from(stride) * n as u64;
            let buf = self.buffer(s, size, vk::BufferUsageFlags::TRANSFORM_FEEDBACK_BUFFER_EXT)?;
            let fill = [f32::from_bits(STREAM_SENTINEL); 4];
            for at in (0..size as usize).step_by(16) {
                self.write_f32s(s, buf, at, &[fill]);
            }
            buffers[b] = Some(buf);
        }
        let (sets, dynamic) = self.resources(s, &job.uniforms, &[], &[], n, cmd, vk::ShaderStageFlags::VERTEX)?;
        let (vb, vstride) = self.vertex_inputs(s, &job.attribute_locations, &job.invocations, &job.uniforms, &dynamic)?;
        let vs = self.module(s, job.spirv)?;
        self.pipeline_layout(s, None)?;
        self.vertex_geometry_pipeline(s, &[vs], &job.attribute_locations, vstride, vk::PrimitiveTopology::POINT_LIST, "stream-out harness")?;
        let fp = xfb.fp();
        // SAFETY: recording into this Scratch's command buffer, between begin and submit; every handle recorded is a live handle of this Scratch.
        unsafe {
            self.begin_point_draw(s, cmd, vb);
            for i in 0..n {
                self.bind_invocation_sets(s, cmd, &sets, &dynamic, i);
                for (b, buf) in buffers.iter().enumerate() {
                    let Some(buf) = *buf else { continue };
                    let stride = u64::from(job.strides[b]);
                    let (xbuf, off, size) = ([s.buffers[buf].buffer], [stride * i as u64], [stride]);
                    (fp.cmd_bind_transform_feedback_buffers_ext)(cmd, b as u32, 1, xbuf.as_ptr(), off.as_ptr(), size.as_ptr());
                }
                (fp.cmd_begin_transform_feedback_ext)(cmd, 0, 0, std::ptr::null(), std::ptr::null());
                d.cmd_draw(cmd, 1, 1, i as u32, 0);
                (fp.cmd_end_transform_feedback_ext)(cmd, 0, 0, std::ptr::null(), std::ptr::null());
            }
            d.cmd_end_rendering(cmd);
            capture_to_host(d, cmd);
        }
        self.submit(s, cmd)?;
        let mut out: [Vec<u32>; 4] = Default::default();
        for (b, buf) in buffers.iter().enumerate() {
            if let Some(buf) = *buf {
                let size = job.strides[b] as usize * n;
                let bytes = self.read_bytes(s, buf);
                out[b] = bytes[..size].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
            }
        }
        Ok(out)
    }
}

/// Records the barrier that makes a capture's transform-feedback writes (data and counters)
/// visible to the host reads after the submit.
fn capture_to_host(d: &ash::Device, cmd: vk::CommandBuffer) {
    let mb = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFORM_FEEDBACK_WRITE_EXT | vk::AccessFlags::TRANSFORM_FEEDBACK_COUNTER_WRITE_EXT)
        .dst_access_mask(vk::AccessFlags::HOST_READ);
    // SAFETY: the callers record into their Scratch's command buffer between begin and submit.
    unsafe {
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFORM_FEEDBACK_EXT,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[mb],
            &[],
            &[],
        )
    };
}

//! The Vulkan side of verification: runs SPIR-V on a real driver (Mesa lavapipe, a CPU device) and
//! captures what the shaders computed.
//!
//! Two jobs, both family-agnostic (they only know SPIR-V, locations and bindings):
//! - [`VertexJob`]: the shader under test is the vertex stage of a point-list draw, one vertex per
//!   invocation; a capture geometry shader (HLSL, compiled by shrec's own [`shrec::dxc::compile`])
//!   writes its input — `SV_Position` and `TEXCOORD0..N-1` at locations 0..N-1 — into a storage
//!   buffer; rasterisation is discarded.
//! - [`FragmentJob`]: the shader under test is the fragment stage; a harness vertex shader (HLSL,
//!   same compiler) draws one 2×2-pixel square per [`FragmentQuad`] (one triangle scissored to the
//!   square: all four pixels are real invocations, none a helper) into RGBA32F colour targets and
//!   a D32_SFLOAT_S8_UINT depth/stencil target. Varyings are affine in x and y, so every pixel gets
//!   exactly `base + i·slope_x + j·slope_y` when the values are dyadic (see [`FragmentQuad`]).
//!   The stencil buffer records which pixels were written (discard leaves 0).
//!
//! Per-invocation constants use dynamic uniform-buffer offsets (one draw per invocation or quad, all
//! in one command buffer, one submit per job). Textures are per job: RGBA32F, nearest filtering,
//! clamp-to-edge, the mip levels the [`TextureSpec`] gives.

use super::TextureShape;
use ash::vk;
use shrec::dxc::{self, DxcLib, Target};
use shrec::formats::Stage;
use std::collections::{BTreeMap, HashMap};
use std::ffi::CStr;
use std::sync::{Mutex, OnceLock};

/// Descriptor set of the capture buffer of the vertex harness (binding 0). Sets below it that the
/// shader under test does not use are bound empty.
pub const CAPTURE_SET: u32 = 3;

/// Geometry-shader jobs captured with transform feedback.
pub mod xfb;

/// Width of the fragment harness target in pixels (16 quads per row).
pub const TARGET_WIDTH: u32 = 32;

/// The packages that provide a Vulkan CPU driver on Debian/Ubuntu.
pub const VULKAN_PACKAGES: &str = "apt-get install -y mesa-vulkan-drivers libvulkan1";

/// A resource binding (Vulkan set and binding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    pub set: u32,
    pub binding: u32,
}

/// A uniform buffer of `len` vec4s; every invocation supplies its own contents.
#[derive(Clone, Debug)]
pub struct UniformSpec {
    pub slot: Slot,
    pub len: u32,
}

/// A texture bound for the whole job: RGBA32F texels, `size`×`height` (×6 faces for a cube map,
/// faces in Vulkan layer order +X −X +Y −Y +Z −Z), rows top to bottom. Sampled with nearest
/// filtering (mip levels too: nearest level), clamp-to-edge.
#[derive(Clone, Debug)]
pub struct TextureSpec {
    pub texture: Slot,
    pub sampler: Slot,
    /// Cube: six layers of `size`² texels; volume: `size`³ texels, slices front to back (z),
    /// each rows top to bottom.
    pub shape: TextureShape,
    /// Width of level 0 in texels.
    pub size: u32,
    /// Height of level 0: `size` except for a flat texture, which may be rectangular.
    pub height: u32,
    pub texels: Vec<[f32; 4]>,
    /// Mip levels 1, 2, …: level k is `max(size >> k, 1)` × `max(height >> k, 1)` (a volume's
    /// depth likewise), faces as level 0 (empty: one level).
    pub mips: Vec<Vec<[f32; 4]>>,
    /// Slices of a [`TextureShape::FlatArray`] (slice after slice in `texels`) or cubes of a
    /// [`TextureShape::CubeArray`] (six faces each, cube after cube); 1 otherwise.
    pub layers: u32,
    /// A depth texture read through a comparison sampler: the image is `D32_SFLOAT` holding
    /// lane x of each texel, the sampler compares with [`COMPARE_OP`].
    pub compare: bool,
}

/// The comparison function of every comparison sampler the harness binds: a texel passes when
/// `reference <= texel` (Vulkan `LESS_OR_EQUAL`; the reference is the left operand).
pub const COMPARE_OP: vk::CompareOp = vk::CompareOp::LESS_OR_EQUAL;

/// One vertex-shader invocation: attribute values by location, and the contents of each uniform
/// buffer (same order as [`VertexJob::uniforms`]; shorter contents are zero-padded).
#[derive(Clone, Debug, Default)]
pub struct VertexInvocation {
    pub attributes: Vec<(u32, [f32; 4])>,
    pub uniforms: Vec<Vec<[f32; 4]>>,
}

#[derive(Clone, Debug)]
pub struct VertexJob<'a> {
    /// The vertex shader under test (SPIR-V bytes, entry `main`).
    pub spirv: &'a [u8],
    /// Input locations the shader declares (each read as float4 / R32G32B32A32_SFLOAT).
    pub attribute_locations: Vec<u32>,
    /// Number of `TEXCOORD` outputs at locations 0..varyings.
    pub varyings: u32,
    /// Also capture the `PointSize` and `SV_CullDistance` outputs ([`VertexCapture::extras`];
    /// a built-in the shader does not write reads as undefined).
    pub extras: bool,
    pub uniforms: Vec<UniformSpec>,
    pub textures: Vec<TextureSpec>,
    pub invocations: Vec<VertexInvocation>,
}

/// What the vertex stage produced for one invocation. `position` is exactly what the shader wrote
/// to the SPIR-V `Position` built-in (DXC's `-fvk-invert-y` has already negated y).
#[derive(Clone, Debug)]
pub struct VertexCapture {
    pub position: [f32; 4],
    pub varyings: Vec<[f32; 4]>,
    /// With [`VertexJob::extras`]: (point size, cull distance, 0, 0).
    pub extras: Option<[f32; 4]>,
}

/// A 2×2 block of pixels. Pixel `p` (0 = top-left, 1 = top-right, 2 = bottom-left, 3 =
/// bottom-right; `i = p & 1`, `j = p >> 1`) receives at location `l` the value
/// `base[l] + i·slope_x[l] + j·slope_y[l]` (see [`FragmentQuad::pixel_varying`]). Keep the values
/// dyadic with few significant bits (and the slopes powers of two, or zero) so that
/// interpolation reproduces them exactly.
#[derive(Clone, Debug, Default)]
pub struct FragmentQuad {
    pub base: Vec<[f32; 4]>,
    pub slope_x: Vec<[f32; 4]>,
    pub slope_y: Vec<[f32; 4]>,
    pub uniforms: Vec<Vec<[f32; 4]>>,
}

impl FragmentQuad {
    /// The value pixel `p` of the quad sees at location `l`.
    pub fn pixel_varying(&self, l: usize, p: usize) -> [f32; 4] {
        let (i, j) = ((p & 1) as f32, (p >> 1) as f32);
        let get = |v: &Vec<[f32; 4]>| v.get(l).copied().unwrap_or([0.0; 4]);
        let (b, sx, sy) = (get(&self.base), get(&self.slope_x), get(&self.slope_y));
        std::array::from_fn(|c| b[c] + i * sx[c] + j * sy[c])
    }
}

#[derive(Clone, Debug)]
pub struct FragmentJob<'a> {
    /// The fragment shader under test (SPIR-V bytes, entry `main`).
    pub spirv: &'a [u8],
    /// Number of `TEXCOORD` inputs at locations 0..varyings the harness provides.
    pub varyings: u32,
    /// Colour outputs (locations) to capture; attachments 0..=max are RGBA32F.
    pub targets: Vec<u32>,
    /// Whether the shader writes depth.
    pub depth: bool,
    pub uniforms: Vec<UniformSpec>,
    pub textures: Vec<TextureSpec>,
    pub quads: Vec<FragmentQuad>,
}

/// What one pixel received.
#[derive(Clone, Debug)]
pub struct PixelCapture {
    /// False when the fragment was discarded.
    pub written: bool,
    /// Colour per entry of [`FragmentJob::targets`].
    pub colors: Vec<[f32; 4]>,
    /// Depth buffer value (the shader's depth output, clamped to [0, 1] by depth clamping; 0 when
    /// the shader does not write depth).
    pub depth: f32,
}

/// Per-draw constants passed by buffer device address (XenosRecomp's Vulkan ABI): for draw `i`
/// (vertex invocation or fragment quad), block `k` of `blocks[i]` is uploaded to device memory and
/// its address is the `k`-th `uint64_t` of the push-constant block (offset `8k`, every stage).
/// Missing blocks read as zeros.
#[derive(Clone, Debug, Default)]
pub struct AddressPush {
    pub blocks: Vec<Vec<Vec<u8>>>,
    /// Bytes reserved per block (larger blocks are an error).
    pub block_size: u64,
    /// Number of addresses in the push-constant block.
    pub addresses: u32,
}

/// Capture-buffer set of the vertex harness when the shader under test uses [`AddressPush`]
/// (its sets 0-3 are XenosRecomp's descriptor heaps).
pub const ADDRESS_CAPTURE_SET: u32 = 4;

/// An open Vulkan device plus what the harness needs to compile its own shaders.
pub struct Gpu {
    _entry: ash::Entry,
    _instance: ash::Instance,
    device: ash::Device,
    queue: Mutex<vk::Queue>,
    queue_family: u32,
    memory: vk::PhysicalDeviceMemoryProperties,
    ubo_align: u64,
    /// Driver description, e.g. "llvmpipe (LLVM 15.0.6, 256 bits) / Mesa 22.3.6".
    pub device_name: String,
    pub dxc: DxcLib,
    harness_shaders: Mutex<HashMap<(Stage, u32), Vec<u8>>>,
    /// VK_EXT_transform_feedback, when the device has it (geometry-shader capture, [`xfb`]).
    xfb: Option<ash::ext::transform_feedback::Device>,
    /// fragmentStoresAndAtomics is enabled (storage-buffer writes from fragment shaders,
    /// [`Gpu::run_fragment_with_memory`]).
    fragment_stores: bool,
}

// SAFETY: ash handles are plain data; the only externally synchronised object shared between
// threads, the queue, is behind a mutex, and every job creates its own pools.
unsafe impl Sync for Gpu {}
// SAFETY: as for Sync: no handle of a Gpu is tied to the thread that created it.
unsafe impl Send for Gpu {}

/// Why no GPU could be opened.
#[derive(Debug, Clone)]
pub struct NoGpu(pub String);

impl std::fmt::Display for NoGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The process-wide GPU (opened on first use).
pub fn shared() -> Result<&'static Gpu, NoGpu> {
    static GPU: OnceLock<Result<Gpu, NoGpu>> = OnceLock::new();
    GPU.get_or_init(Gpu::open).as_ref().map_err(Clone::clone)
}

/// The shared GPU for a test: panics with the packages to install when there is none, unless
/// `SHREC_ALLOW_MISSING_TOOLS=1`, in which case it prints why and returns `None` (skip).
pub fn require() -> Option<&'static Gpu> {
    match shared() {
        Ok(g) => Some(g),
        Err(e) => {
            if std::env::var("SHREC_ALLOW_MISSING_TOOLS").is_ok_and(|v| v == "1") {
                eprintln!("verify: SKIPPED (SHREC_ALLOW_MISSING_TOOLS=1): {e}");
                None
            } else {
                panic!("verify: {e}\n(set SHREC_ALLOW_MISSING_TOOLS=1 to skip verification tests instead)");
            }
        }
    }
}

fn vkerr(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{what}: {e:?}")
}

struct Buffer {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    ptr: *mut u8,
    size: u64,
}

struct Image {
    image: vk::Image,
    memory: vk::DeviceMemory,
    view: vk::ImageView,
}

/// Everything one job creates, destroyed at the end.
#[derive(Default)]
struct Scratch {
    buffers: Vec<Buffer>,
    images: Vec<Image>,
    samplers: Vec<vk::Sampler>,
    modules: Vec<vk::ShaderModule>,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    pipeline_layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    descriptor_pool: vk::DescriptorPool,
    command_pool: vk::CommandPool,
    fence: vk::Fence,
}

impl Gpu {
    fn open() -> Result<Gpu, NoGpu> {
        Self::open_inner().map_err(|e| NoGpu(format!("no usable Vulkan CPU device (lavapipe): {e}. Install it with `{VULKAN_PACKAGES}`")))
    }

    fn open_inner() -> Result<Gpu, String> {
        // SAFETY: loading the system Vulkan loader.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("cannot load the Vulkan loader libvulkan.so.1 ({e})"))?;
        let app = vk::ApplicationInfo::default().application_name(c"shrec-verify").api_version(vk::API_VERSION_1_3);
        // SAFETY: valid create info.
        let instance =
            unsafe { entry.create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None) }.map_err(vkerr("vkCreateInstance"))?;
        let result = Self::with_instance(entry, instance.clone());
        if result.is_err() {
            // SAFETY: nothing else uses the instance.
            unsafe { instance.destroy_instance(None) };
        }
        result
    }

    fn with_instance(entry: ash::Entry, instance: ash::Instance) -> Result<Gpu, String> {
        // SAFETY: plain queries on a live instance.
        let physicals = unsafe { instance.enumerate_physical_devices() }.map_err(vkerr("vkEnumeratePhysicalDevices"))?;
        let mut seen = Vec::new();
        let mut chosen = None;
        for p in physicals {
            // SAFETY: plain queries on a live instance and one of its physical devices.
            let props = unsafe { instance.get_physical_device_properties(p) };
            // SAFETY: Vulkan fills this fixed-size array with a NUL-terminated string.
            let name = unsafe { CStr::from_ptr(props.device_name.as_ptr()) }.to_string_lossy().into_owned();
            seen.push(format!("{name} ({:?})", props.device_type));
            if props.device_type == vk::PhysicalDeviceType::CPU && props.api_version >= vk::API_VERSION_1_3 && chosen.is_none() {
                chosen = Some((p, props, name));
            }
        }
        let (physical, props, name) = chosen.ok_or_else(|| format!("no Vulkan 1.3 CPU device among [{}]", seen.join(", ")))?;
        // SAFETY: plain queries on a live instance and one of its physical devices.
        let features = unsafe { instance.get_physical_device_features(physical) };
        for (ok, what) in [
            (features.geometry_shader, "geometryShader"),
            (features.vertex_pipeline_stores_and_atomics, "vertexPipelineStoresAndAtomics"),
            (features.depth_clamp, "depthClamp"),
        ] {
            if ok == vk::FALSE {
                return Err(format!("{name} lacks the {what} feature"));
            }
        }
        // SAFETY: plain queries on a live instance and one of its physical devices.
        let queue_family = unsafe { instance.get_physical_device_queue_family_properties(physical) }
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::GRAPHICS))
            .ok_or_else(|| format!("{name} has no graphics queue"))? as u32;
        let enabled = vk::PhysicalDeviceFeatures::default()
            .geometry_shader(true)
            .vertex_pipeline_stores_and_atomics(true)
            .fragment_stores_and_atomics(features.fragment_stores_and_atomics == vk::TRUE)
            .depth_clamp(true)
            .shader_cull_distance(features.shader_cull_distance == vk::TRUE)
            .shader_tessellation_and_geometry_point_size(features.shader_tessellation_and_geometry_point_size == vk::TRUE)
            .shader_int64(features.shader_int64 == vk::TRUE)
            .image_cube_array(features.image_cube_array == vk::TRUE)
            .shader_sampled_image_array_dynamic_indexing(features.shader_sampled_image_array_dynamic_indexing == vk::TRUE);
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default().dynamic_rendering(true);
        // Xenos (XenosRecomp's ABI): constants through push-constant buffer device addresses
        // (uint64_t), textures through runtime-sized descriptor heaps. Enabled when supported.
        let mut v12_supported = vk::PhysicalDeviceVulkan12Features::default();
        {
            let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut v12_supported);
            // SAFETY: plain queries on a live instance and one of its physical devices.
            unsafe { instance.get_physical_device_features2(physical, &mut f2) };
        }
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default()
            .buffer_device_address(v12_supported.buffer_device_address == vk::TRUE)
            .runtime_descriptor_array(v12_supported.runtime_descriptor_array == vk::TRUE);
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&priorities)];
        let has_xfb = xfb::supported(&instance, physical);
        let mut xfb_features = vk::PhysicalDeviceTransformFeedbackFeaturesEXT::default().transform_feedback(true);
        let xfb_ext = [ash::ext::transform_feedback::NAME.as_ptr()];
        let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues).enabled_features(&enabled).push_next(&mut v13).push_next(&mut v12);
        if has_xfb {
            info = info.enabled_extension_names(&xfb_ext).push_next(&mut xfb_features);
        }
        // SAFETY: valid create info for a device of this instance.
        let device = unsafe { instance.create_device(physical, &info, None) }.map_err(vkerr("vkCreateDevice"))?;
        // SAFETY: queue family `queue_family`, index 0, was requested in the device create info.
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        // SAFETY: plain queries on a live instance and one of its physical devices.
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        let driver = {
            let mut drv = vk::PhysicalDeviceDriverProperties::default();
            let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut drv);
            // SAFETY: plain queries on a live instance and one of its physical devices.
            unsafe { instance.get_physical_device_properties2(physical, &mut p2) };
            // SAFETY: Vulkan fills this fixed-size array with a NUL-terminated string.
            unsafe { CStr::from_ptr(drv.driver_info.as_ptr()) }.to_string_lossy().into_owned()
        };
        let dxc = dxc::locate(&dxc::LocateOptions::default()).map_err(|e| format!("DXC: {e}"))?;
        let xfb = has_xfb.then(|| ash::ext::transform_feedback::Device::new(&instance, &device));
        Ok(Gpu {
            _entry: entry,
            _instance: instance,
            device,
            queue: Mutex::new(queue),
            queue_family,
            memory,
            ubo_align: props.limits.min_uniform_buffer_offset_alignment.max(16),
            device_name: format!("{name} / {driver}"),
            dxc,
            harness_shaders: Mutex::new(HashMap::new()),
            xfb,
            fragment_stores: features.fragment_stores_and_atomics == vk::TRUE,
        })
    }

    /// SPIR-V of a harness shader (compiled once per process with shrec's DXC path).
    fn harness_shader(&self, stage: Stage, varyings: u32) -> Result<Vec<u8>, String> {
        let key = (stage, varyings);
        if let Some(s) = self.harness_shaders.lock().unwrap().get(&key) {
            return Ok(s.clone());
        }
        let hlsl = match stage {
            // Bit 31: the capture shader of an `AddressPush` job (set 4, base after the addresses);
            // bit 15: the job's `extras`.
            Stage::Geometry if varyings & 1 << 31 != 0 => {
                capture_gs_hlsl_at(varyings & 0x7FFF, varyings & 1 << 15 != 0, ADDRESS_CAPTURE_SET, (varyings >> 16) & 0x7FFF)
            }
            Stage::Geometry => capture_gs_hlsl(varyings & 0x7FFF, varyings & 1 << 15 != 0),
            Stage::Vertex => quad_vs_hlsl(varyings),
            Stage::Pixel => unreachable!(),
        };
        let spirv = dxc::compile(&self.dxc, &hlsl, stage, Target::Spirv).map_err(|e| format!("harness {stage:?} shader: {e}\n{hlsl}"))?;
        self.harness_shaders.lock().unwrap().insert(key, spirv.clone());
        Ok(spirv)
    }

    fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Result<u32, String> {
        (0..self.memory.memory_type_count)
            .find(|&i| bits & (1 << i) != 0 && self.memory.memory_types[i as usize].property_flags.contains(flags))
            .ok_or_else(|| format!("no memory type with {flags:?}"))
    }

    fn buffer(&self, s: &mut Scratch, size: u64, usage: vk::BufferUsageFlags) -> Result<usize, String> {
        let d = &self.device;
        let size = size.max(16);
        // SAFETY: the create/allocate infos outlive the calls; the memory is bound once and mapped whole while the Scratch owns it; `destroy` frees it after the fence.
        unsafe {
            let buffer = d.create_buffer(&vk::BufferCreateInfo::default().size(size).usage(usage), None).map_err(vkerr("vkCreateBuffer"))?;
            let req = d.get_buffer_memory_requirements(buffer);
            let ty = self.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT)?;
            let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
            let mut alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty);
            if usage.contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS) {
                alloc = alloc.push_next(&mut flags);
            }
            let memory = d.allocate_memory(&alloc, None).map_err(vkerr("vkAllocateMemory"))?;
            d.bind_buffer_memory(buffer, memory, 0).map_err(vkerr("vkBindBufferMemory"))?;
            let ptr = d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()).map_err(vkerr("vkMapMemory"))? as *mut u8;
            std::ptr::write_bytes(ptr, 0, size as usize);
            s.buffers.push(Buffer { buffer, memory, ptr, size });
        }
        Ok(s.buffers.len() - 1)
    }

    #[allow(clippy::too_many_arguments)]
    fn image(
        &self,
        s: &mut Scratch,
        extent: (u32, u32),
        layers: u32,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
        shape: TextureShape,
        levels: u32,
    ) -> Result<usize, String> {
        let d = &self.device;
        let (image_type, view_type, depth) = match shape {
            TextureShape::Flat => (vk::ImageType::TYPE_2D, vk::ImageViewType::TYPE_2D, 1),
            TextureShape::FlatArray => (vk::ImageType::TYPE_2D, vk::ImageViewType::TYPE_2D_ARRAY, 1),
            TextureShape::Cube => (vk::ImageType::TYPE_2D, vk::ImageViewType::CUBE, 1),
            TextureShape::CubeArray => (vk::ImageType::TYPE_2D, vk::ImageViewType::CUBE_ARRAY, 1),
            TextureShape::Volume => (vk::ImageType::TYPE_3D, vk::ImageViewType::TYPE_3D, extent.0),
        };
        // SAFETY: the create infos outlive the calls; the image, its memory and view belong to this Scratch and are destroyed by `destroy` after the fence.
        unsafe {
            let info = vk::ImageCreateInfo::default()
                .flags(if matches!(shape, TextureShape::Cube | TextureShape::CubeArray) {
                    vk::ImageCreateFlags::CUBE_COMPATIBLE
                } else {
                    vk::ImageCreateFlags::empty()
                })
                .image_type(image_type)
                .format(format)
                .extent(vk::Extent3D { width: extent.0, height: extent.1, depth })
                .mip_levels(levels)
                .array_layers(layers)
                .samples(vk::SampleCountFlags::TYPE_1)
                .tiling(vk::ImageTiling::OPTIMAL)
                .usage(usage)
                .initial_layout(vk::ImageLayout::UNDEFINED);
            let image = d.create_image(&info, None).map_err(vkerr("vkCreateImage"))?;
            let req = d.get_image_memory_requirements(image);
            let ty = self.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::empty())?;
            let memory = d
                .allocate_memory(&vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty), None)
                .map_err(vkerr("vkAllocateMemory"))?;
            d.bind_image_memory(image, memory, 0).map_err(vkerr("vkBindImageMemory"))?;
            let view = d
                .create_image_view(
                    &vk::ImageViewCreateInfo::default().image(image).view_type(view_type).format(format).subresource_range(range(aspect, layers)),
                    None,
                )
                .map_err(vkerr("vkCreateImageView"))?;
            s.images.push(Image { image, memory, view });
        }
        Ok(s.images.len() - 1)
    }

    fn module(&self, s: &mut Scratch, spirv: &[u8]) -> Result<vk::ShaderModule, String> {
        if !spirv.len().is_multiple_of(4) {
            return Err("SPIR-V length is not a multiple of 4".into());
        }
        let words: Vec<u32> = spirv.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        // SAFETY: the create info and the arrays it points to outlive the call; the new handle belongs to this Scratch and is destroyed by `destroy` after the fence is waited.
        let m = unsafe { self.device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None) }
            .map_err(vkerr("vkCreateShaderModule"))?;
        s.modules.push(m);
        Ok(m)
    }

    fn destroy(&self, s: Scratch) {
        let d = &self.device;
        // SAFETY: called once per Scratch, after its fence was waited: the GPU no longer uses any of these handles.
        unsafe {
            if s.fence != vk::Fence::null() {
                d.destroy_fence(s.fence, None);
            }
            if s.command_pool != vk::CommandPool::null() {
                d.destroy_command_pool(s.command_pool, None);
            }
            if s.pipeline != vk::Pipeline::null() {
                d.destroy_pipeline(s.pipeline, None);
            }
            if s.pipeline_layout != vk::PipelineLayout::null() {
                d.destroy_pipeline_layout(s.pipeline_layout, None);
            }
            if s.descriptor_pool != vk::DescriptorPool::null() {
                d.destroy_descriptor_pool(s.descriptor_pool, None);
            }
            for l in s.set_layouts {
                d.destroy_descriptor_set_layout(l, None);
            }
            for m in s.modules {
                d.destroy_shader_module(m, None);
            }
            for smp in s.samplers {
                d.destroy_sampler(smp, None);
            }
            for i in s.images {
                d.destroy_image_view(i.view, None);
                d.destroy_image(i.image, None);
                d.free_memory(i.memory, None);
            }
            for b in s.buffers {
                d.destroy_buffer(b.buffer, None);
                d.free_memory(b.memory, None);
            }
        }
    }

    fn write_f32s(&self, s: &Scratch, buf: usize, offset: usize, values: &[[f32; 4]]) {
        let b = &s.buffers[buf];
        let bytes = values.len() * 16;
        assert!(offset + bytes <= b.size as usize, "buffer write out of range");
        // SAFETY: mapped, coherent, in range (checked above).
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr() as *const u8, b.ptr.add(offset), bytes) };
    }

    fn read_bytes(&self, s: &Scratch, buf: usize) -> Vec<u8> {
        let b = &s.buffers[buf];
        // SAFETY: mapped, coherent, the GPU is idle (fence waited).
        unsafe { std::slice::from_raw_parts(b.ptr, b.size as usize).to_vec() }
    }

    /// Begins a rendering pass over one pixel with no attachment (the vertex, geometry and
    /// stream-out jobs read captured outputs, not pixels) and binds the pipeline and the vertex
    /// buffer `vb`: what their draws share.
    ///
    /// # Safety
    /// `cmd` is `s`'s command buffer, recording (between [`Gpu::begin`] and [`Gpu::submit`]),
    /// and `s.pipeline` is built.
    unsafe fn begin_point_draw(&self, s: &Scratch, cmd: vk::CommandBuffer, vb: usize) {
        let ri = vk::RenderingInfo::default()
            .render_area(vk::Rect2D { offset: vk::Offset2D { x: 0, y: 0 }, extent: vk::Extent2D { width: 1, height: 1 } })
            .layer_count(1);
        // SAFETY: the caller's contract: a recording command buffer of `s`, whose handles are live.
        unsafe {
            self.device.cmd_begin_rendering(cmd, &ri);
            self.device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, s.pipeline);
            self.device.cmd_bind_vertex_buffers(cmd, 0, &[s.buffers[vb].buffer], &[0]);
        }
    }

    /// Binds `sets` with invocation (or quad) `i`'s offsets into the `dynamic` uniforms
    /// ([`Gpu::resources`]' second result: each one's data stands `stride` bytes apart).
    ///
    /// # Safety
    /// As [`Gpu::begin_point_draw`], with `s.pipeline_layout` built.
    unsafe fn bind_invocation_sets(
        &self,
        s: &Scratch,
        cmd: vk::CommandBuffer,
        sets: &[vk::DescriptorSet],
        dynamic: &[(usize, usize, u64)],
        i: usize,
    ) {
        let offsets: Vec<u32> = dynamic.iter().map(|&(_, _, stride)| (stride * i as u64) as u32).collect();
        // SAFETY: the caller's contract: a recording command buffer of `s`, whose handles are live.
        unsafe { self.device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, s.pipeline_layout, 0, sets, &offsets) };
    }

    /// The vertex buffer of a run of `invocations`, one vertex each with every location up to
    /// the highest of `locations` (16 bytes a location), and each invocation's data of the
    /// `dynamic` uniforms (`resources`' offsets) written at its offset: (buffer, vertex stride).
    fn vertex_inputs(
        &self,
        s: &mut Scratch,
        locations: &[u32],
        invocations: &[VertexInvocation],
        uniforms: &[UniformSpec],
        dynamic: &[(usize, usize, u64)],
    ) -> Result<(usize, usize), String> {
        let max_loc = locations.iter().max().map_or(0, |&m| m as usize + 1);
        let vstride = max_loc.max(1) * 16;
        let vb = self.buffer(s, (invocations.len() * vstride) as u64, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        for (i, inv) in invocations.iter().enumerate() {
            for &(loc, v) in &inv.attributes {
                if (loc as usize) < max_loc {
                    self.write_f32s(s, vb, i * vstride + loc as usize * 16, &[v]);
                }
            }
            for &(u, buf, stride) in dynamic {
                let data = inv.uniforms.get(u).map(Vec::as_slice).unwrap_or(&[]);
                if data.len() > uniforms[u].len as usize {
                    return Err(format!("invocation {i}: {} vec4s for a uniform of {}", data.len(), uniforms[u].len));
                }
                self.write_f32s(s, buf, i * stride as usize, data);
            }
        }
        Ok((vb, vstride))
    }

    /// Shared setup: descriptor set layouts / pool / sets for uniforms (dynamic) and textures,
    /// plus extra storage-buffer bindings. Returns (sets by set number, dynamic uniform order,
    /// uniform buffers with their block stride).
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn resources(
        &self,
        s: &mut Scratch,
        uniforms: &[UniformSpec],
        textures: &[TextureSpec],
        storage: &[(Slot, usize)],
        count: usize,
        cmd: vk::CommandBuffer,
        stages: vk::ShaderStageFlags,
    ) -> Result<(Vec<vk::DescriptorSet>, Vec<(usize, usize, u64)>), String> {
        let d = &self.device;
        // Bindings per set.
        let mut sets: BTreeMap<u32, Vec<(u32, vk::DescriptorType)>> = BTreeMap::new();
        for u in uniforms {
            sets.entry(u.slot.set).or_default().push((u.slot.binding, vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC));
        }
        // Several textures (or samplers) on one slot form an array binding (a bindless heap, as
        // in XenosRecomp's ABI): the k-th spec naming a slot is array element k.
        let mut array_len: BTreeMap<(Slot, i32), u32> = BTreeMap::new();
        for t in textures {
            for (slot, ty) in [(t.texture, vk::DescriptorType::SAMPLED_IMAGE), (t.sampler, vk::DescriptorType::SAMPLER)] {
                let n = array_len.entry((slot, ty.as_raw())).or_default();
                if *n == 0 {
                    sets.entry(slot.set).or_default().push((slot.binding, ty));
                }
                *n += 1;
            }
        }
        for (slot, _) in storage {
            sets.entry(slot.set).or_default().push((slot.binding, vk::DescriptorType::STORAGE_BUFFER));
        }
        let max_set = sets.keys().max().copied().unwrap_or(0);
        let mut pool_sizes: BTreeMap<i32, u32> = BTreeMap::new();
        for set in 0..=max_set {
            let bindings: Vec<vk::DescriptorSetLayoutBinding> = sets
                .get(&set)
                .map(|v| {
                    v.iter()
                        .map(|&(b, ty)| {
                            let n = array_len.get(&(Slot { set, binding: b }, ty.as_raw())).copied().unwrap_or(1);
                            *pool_sizes.entry(ty.as_raw()).or_default() += n;
                            vk::DescriptorSetLayoutBinding::default().binding(b).descriptor_type(ty).descriptor_count(n).stage_flags(stages)
                        })
                        .collect()
                })
                .unwrap_or_default();
            // SAFETY: the create info and the arrays it points to outlive the call; the new handle belongs to this Scratch and is destroyed by `destroy` after the fence is waited.
            let l = unsafe { d.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None) }
                .map_err(vkerr("vkCreateDescriptorSetLayout"))?;
            s.set_layouts.push(l);
        }
        let sizes: Vec<vk::DescriptorPoolSize> =
            pool_sizes.iter().map(|(&ty, &n)| vk::DescriptorPoolSize { ty: vk::DescriptorType::from_raw(ty), descriptor_count: n }).collect();
        let sizes = if sizes.is_empty() { vec![vk::DescriptorPoolSize { ty: vk::DescriptorType::SAMPLER, descriptor_count: 1 }] } else { sizes };
        // SAFETY: the create info and the arrays it points to outlive the call; the new handle belongs to this Scratch and is destroyed by `destroy` after the fence is waited.
        s.descriptor_pool =
            unsafe { d.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(max_set + 1).pool_sizes(&sizes), None) }
                .map_err(vkerr("vkCreateDescriptorPool"))?;
        // SAFETY: the create info and the arrays it points to outlive the call; the new handle belongs to this Scratch and is destroyed by `destroy` after the fence is waited.
        let sets_vk = unsafe {
            d.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(s.descriptor_pool).set_layouts(&s.set_layouts))
        }
        .map_err(vkerr("vkAllocateDescriptorSets"))?;

        // Uniform buffers: one block per invocation.
        let mut dynamic = Vec::new(); // (uniform index, buffer index, stride)
        let mut order: Vec<usize> = (0..uniforms.len()).collect();
        order.sort_by_key(|&i| uniforms[i].slot);
        for i in order {
            let u = &uniforms[i];
            let block = u64::from(u.len) * 16;
            let stride = block.div_ceil(self.ubo_align) * self.ubo_align;
            let buf = self.buffer(s, stride * count.max(1) as u64, vk::BufferUsageFlags::UNIFORM_BUFFER)?;
            let info = [vk::DescriptorBufferInfo { buffer: s.buffers[buf].buffer, offset: 0, range: block }];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(sets_vk[u.slot.set as usize])
                .dst_binding(u.slot.binding)
                .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC)
                .buffer_info(&info);
            // SAFETY: the write names live resources of this Scratch, and no submitted command buffer uses the set yet (descriptors are written before recording).
            unsafe { d.update_descriptor_sets(&[write], &[]) };
            dynamic.push((i, buf, stride));
        }
        for (slot, buf) in storage {
            let info = [vk::DescriptorBufferInfo { buffer: s.buffers[*buf].buffer, offset: 0, range: vk::WHOLE_SIZE }];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(sets_vk[slot.set as usize])
                .dst_binding(slot.binding)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&info);
            // SAFETY: the write names live resources of this Scratch, and no submitted command buffer uses the set yet (descriptors are written before recording).
            unsafe { d.update_descriptor_sets(&[write], &[]) };
        }
        // Textures: upload through a staging buffer.
        let mut next_element: BTreeMap<(Slot, i32), u32> = BTreeMap::new();
        for t in textures {
            let layers = match t.shape {
                TextureShape::Cube => 6,
                TextureShape::CubeArray => 6 * t.layers.max(1),
                TextureShape::FlatArray => t.layers.max(1),
                TextureShape::Flat | TextureShape::Volume => 1,
            };
            // a depth texture holds lane x of each texel as D32_SFLOAT (4 bytes a texel)
            let (format, aspect, texel_bytes) = if t.compare {
                (vk::Format::D32_SFLOAT, vk::ImageAspectFlags::DEPTH, 4)
            } else {
                (vk::Format::R32G32B32A32_SFLOAT, vk::ImageAspectFlags::COLOR, 16)
            };
            let levels: Vec<&Vec<[f32; 4]>> = std::iter::once(&t.texels).chain(&t.mips).collect();
            let mut regions = Vec::new();
            let mut offset = 0usize;
            if t.height != t.size && !matches!(t.shape, TextureShape::Flat | TextureShape::FlatArray) {
                return Err(format!("texture at {:?}: a {:?} texture is square ({}×{} given)", t.texture, t.shape, t.size, t.height));
            }
            for (k, texels) in levels.iter().enumerate() {
                let side = (t.size >> k).max(1);
                let rows = (t.height >> k).max(1);
                let depth = if t.shape == TextureShape::Volume { side } else { 1 };
                let expected = (side * rows * depth * layers) as usize;
                if texels.len() != expected {
                    return Err(format!("texture at {:?} level {k} has {} texels, expected {expected}", t.texture, texels.len()));
                }
                regions.push(
                    vk::BufferImageCopy::default()
                        .buffer_offset((offset * texel_bytes) as u64)
                        .image_subresource(vk::ImageSubresourceLayers {
                            aspect_mask: aspect,
                            mip_level: k as u32,
                            base_array_layer: 0,
                            layer_count: layers,
                        })
                        .image_extent(vk::Extent3D { width: side, height: rows, depth }),
                );
                offset += expected;
            }
            let img = self.image(
                s,
                (t.size, t.height),
                layers,
                format,
                vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
                aspect,
                t.shape,
                levels.len() as u32,
            )?;
            // rounded up to whole [f32; 4]s (depth values are packed four to one below)
            let staging = self.buffer(s, (offset * texel_bytes).div_ceil(16) as u64 * 16, vk::BufferUsageFlags::TRANSFER_SRC)?;
            let all: Vec<[f32; 4]> = levels.iter().flat_map(|l| l.iter().copied()).collect();
            if t.compare {
                // lane x of each texel, packed four to an [f32; 4]
                let depths: Vec<f32> = all.iter().map(|v| v[0]).collect();
                let packed: Vec<[f32; 4]> = depths.chunks(4).map(|c| std::array::from_fn(|i| c.get(i).copied().unwrap_or(0.0))).collect();
                self.write_f32s(s, staging, 0, &packed);
            } else {
                self.write_f32s(s, staging, 0, &all);
            }
            let image = s.images[img].image;
            // SAFETY: recording into this Scratch's command buffer, between begin and submit; every handle recorded is a live handle of this Scratch.
            unsafe {
                barrier(d, cmd, image, aspect, layers, vk::ImageLayout::UNDEFINED, vk::ImageLayout::TRANSFER_DST_OPTIMAL);
                d.cmd_copy_buffer_to_image(cmd, s.buffers[staging].buffer, image, vk::ImageLayout::TRANSFER_DST_OPTIMAL, &regions);
                barrier(d, cmd, image, aspect, layers, vk::ImageLayout::TRANSFER_DST_OPTIMAL, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
            }
            // SAFETY: the create info and the arrays it points to outlive the call; the new handle belongs to this Scratch and is destroyed by `destroy` after the fence is waited.
            let sampler = unsafe {
                d.create_sampler(
                    &vk::SamplerCreateInfo::default()
                        .mag_filter(vk::Filter::NEAREST)
                        .min_filter(vk::Filter::NEAREST)
                        .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
                        .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                        .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                        .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                        .min_lod(0.0)
                        .max_lod(t.mips.len() as f32)
                        .compare_enable(t.compare)
                        .compare_op(COMPARE_OP),
                    None,
                )
            }
            .map_err(vkerr("vkCreateSampler"))?;
            s.samplers.push(sampler);
            let ii = [vk::DescriptorImageInfo {
                sampler: vk::Sampler::null(),
                image_view: s.images[img].view,
                image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            }];
            let si = [vk::DescriptorImageInfo { sampler, image_view: vk::ImageView::null(), image_layout: vk::ImageLayout::UNDEFINED }];
            let mut element = |slot: Slot, ty: vk::DescriptorType| {
                let e = next_element.entry((slot, ty.as_raw())).or_default();
                *e += 1;
                *e - 1
            };
            let (te, se) = (element(t.texture, vk::DescriptorType::SAMPLED_IMAGE), element(t.sampler, vk::DescriptorType::SAMPLER));
            let writes = [
                vk::WriteDescriptorSet::default()
                    .dst_set(sets_vk[t.texture.set as usize])
                    .dst_binding(t.texture.binding)
                    .dst_array_element(te)
                    .descriptor_type(vk::DescriptorType::SAMPLED_IMAGE)
                    .image_info(&ii),
                vk::WriteDescriptorSet::default()
                    .dst_set(sets_vk[t.sampler.set as usize])
                    .dst_binding(t.sampler.binding)
                    .dst_array_element(se)
                    .descriptor_type(vk::DescriptorType::SAMPLER)
                    .image_info(&si),
            ];
            // SAFETY: the write names live resources of this Scratch, and no submitted command buffer uses the set yet (descriptors are written before recording).
            unsafe { d.update_descriptor_sets(&writes, &[]) };
        }
        Ok((sets_vk, dynamic))
    }

    fn begin(&self, s: &mut Scratch) -> Result<vk::CommandBuffer, String> {
        let d = &self.device;
        // SAFETY: the pool and its one command buffer belong to this Scratch (one per job, so no external synchronisation is shared); the fence is created unsignalled for this submission.
        unsafe {
            s.command_pool = d
                .create_command_pool(&vk::CommandPoolCreateInfo::default().queue_family_index(self.queue_family), None)
                .map_err(vkerr("vkCreateCommandPool"))?;
            let cmd = d
                .allocate_command_buffers(&vk::CommandBufferAllocateInfo::default().command_pool(s.command_pool).command_buffer_count(1))
                .map_err(vkerr("vkAllocateCommandBuffers"))?[0];
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT))
                .map_err(vkerr("vkBeginCommandBuffer"))?;
            s.fence = d.create_fence(&vk::FenceCreateInfo::default(), None).map_err(vkerr("vkCreateFence"))?;
            Ok(cmd)
        }
    }

    fn submit(&self, s: &Scratch, cmd: vk::CommandBuffer) -> Result<(), String> {
        let d = &self.device;
        // SAFETY: the command buffer was recorded by this thread; the queue, the only object shared between threads, is used under its mutex; the fence is waited before anything is read back.
        unsafe {
            d.end_command_buffer(cmd).map_err(vkerr("vkEndCommandBuffer"))?;
            let cmds = [cmd];
            {
                let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                d.queue_submit(*q, &[vk::SubmitInfo::default().command_buffers(&cmds)], s.fence).map_err(vkerr("vkQueueSubmit"))?;
            }
            d.wait_for_fences(&[s.fence], true, u64::MAX).map_err(vkerr("vkWaitForFences"))?;
        }
        Ok(())
    }

    fn pipeline_layout(&self, s: &mut Scratch, push: Option<vk::PushConstantRange>) -> Result<(), String> {
        let ranges: Vec<vk::PushConstantRange> = push.into_iter().collect();
        // SAFETY: the create info and the arrays it points to outlive the call; the new handle belongs to this Scratch and is destroyed by `destroy` after the fence is waited.
        s.pipeline_layout = unsafe {
            self.device
                .create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&s.set_layouts).push_constant_ranges(&ranges), None)
        }
        .map_err(vkerr("vkCreatePipelineLayout"))?;
        Ok(())
    }

    /// Runs a vertex shader once per invocation and captures its outputs.
    pub fn run_vertex(&self, job: &VertexJob) -> Result<Vec<VertexCapture>, String> {
        let mut s = Scratch::default();
        let r = self.run_vertex_inner(&mut s, job, None, None);
        self.destroy(s);
        r
    }

    /// [`Gpu::run_vertex`] with per-invocation constants passed by device address.
    pub fn run_vertex_with_addresses(&self, job: &VertexJob, push: &AddressPush) -> Result<Vec<VertexCapture>, String> {
        let mut s = Scratch::default();
        let r = self.run_vertex_inner(&mut s, job, Some(push), None);
        self.destroy(s);
        r
    }

    /// [`Gpu::run_vertex_with_addresses`] with a writable storage buffer at `memory.0` holding
    /// `memory.1` (length a multiple of 4) before the draws; `memory.1` receives its contents
    /// after them. Draws run in invocation order.
    pub fn run_vertex_with_memory(&self, job: &VertexJob, push: &AddressPush, memory: (Slot, &mut Vec<u8>)) -> Result<Vec<VertexCapture>, String> {
        let mut s = Scratch::default();
        let r = self.run_vertex_inner(&mut s, job, Some(push), Some(memory));
        self.destroy(s);
        r
    }

    /// Uploads the [`AddressPush`] blocks; returns the push-constant bytes of every draw.
    fn address_blocks(&self, s: &mut Scratch, push: &AddressPush, draws: usize) -> Result<Vec<Vec<u8>>, String> {
        let stride = push.block_size.div_ceil(256).max(1) * 256;
        let mut bases = Vec::new();
        for _ in 0..push.addresses {
            let buf =
                self.buffer(s, stride * draws.max(1) as u64, vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS)?;
            // SAFETY: a live buffer of this Scratch, created with SHADER_DEVICE_ADDRESS usage on a device with bufferDeviceAddress enabled.
            let addr = unsafe { self.device.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(s.buffers[buf].buffer)) };
            bases.push((buf, addr));
        }
        let mut out = Vec::with_capacity(draws);
        for i in 0..draws {
            let mut pc = Vec::new();
            for (k, &(buf, addr)) in bases.iter().enumerate() {
                if let Some(data) = push.blocks.get(i).and_then(|b| b.get(k)) {
                    if data.len() as u64 > push.block_size {
                        return Err(format!("draw {i}: address block {k} has {} bytes, more than {}", data.len(), push.block_size));
                    }
                    let b = &s.buffers[buf];
                    // SAFETY: mapped, coherent, in range (checked above).
                    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), b.ptr.add(i * stride as usize), data.len()) };
                }
                pc.extend_from_slice(&(addr + i as u64 * stride).to_le_bytes());
            }
            out.push(pc);
        }
        Ok(out)
    }

    /// The pipeline of the vertex and geometry harnesses (into `s.pipeline`): `stages` = the
    /// vertex and (if given) the geometry shader module, one vertex binding of `vstride` bytes with an
    /// RGBA32F attribute at offset 16 × location for each of `attribute_locations`, `topology`,
    /// rasterisation discarded (the geometry stage captures) behind a 1×1 viewport. `what` names
    /// the harness in the error.
    fn vertex_geometry_pipeline(
        &self,
        s: &mut Scratch,
        stages: &[vk::ShaderModule],
        attribute_locations: &[u32],
        vstride: usize,
        topology: vk::PrimitiveTopology,
        what: &str,
    ) -> Result<(), String> {
        // the vertex shader, then (when given) the geometry shader
        let stage_infos: Vec<vk::PipelineShaderStageCreateInfo> = stages
            .iter()
            .zip([vk::ShaderStageFlags::VERTEX, vk::ShaderStageFlags::GEOMETRY])
            .map(|(&m, stage)| vk::PipelineShaderStageCreateInfo::default().stage(stage).module(m).name(c"main"))
            .collect();
        let bindings = [vk::VertexInputBindingDescription { binding: 0, stride: vstride as u32, input_rate: vk::VertexInputRate::VERTEX }];
        let attrs: Vec<vk::VertexInputAttributeDescription> = attribute_locations
            .iter()
            .map(|&l| vk::VertexInputAttributeDescription { location: l, binding: 0, format: vk::Format::R32G32B32A32_SFLOAT, offset: l * 16 })
            .collect();
        let vi = vk::PipelineVertexInputStateCreateInfo::default().vertex_binding_descriptions(&bindings).vertex_attribute_descriptions(&attrs);
        let ia = vk::PipelineInputAssemblyStateCreateInfo::default().topology(topology);
        let viewports = [vk::Viewport { x: 0.0, y: 0.0, width: 1.0, height: 1.0, min_depth: 0.0, max_depth: 1.0 }];
        let scissors = [vk::Rect2D { offset: vk::Offset2D { x: 0, y: 0 }, extent: vk::Extent2D { width: 1, height: 1 } }];
        let vp = vk::PipelineViewportStateCreateInfo::default().viewports(&viewports).scissors(&scissors);
        let rs = vk::PipelineRasterizationStateCreateInfo::default().rasterizer_discard_enable(true).line_width(1.0);
        let ms = vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let mut rendering = vk::PipelineRenderingCreateInfo::default();
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stage_infos)
            .vertex_input_state(&vi)
            .input_assembly_state(&ia)
            .viewport_state(&vp)
            .rasterization_state(&rs)
            .multisample_state(&ms)
            .layout(s.pipeline_layout)
            .push_next(&mut rendering);
        // SAFETY: the create info and every state struct it points to live on this stack frame through the call; the shader modules and layout are live handles of this Scratch, which owns the pipeline (destroyed by `destroy`).
        s.pipeline = unsafe { self.device.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
            .map_err(|(_, e)| format!("vkCreateGraphicsPipelines ({what}): {e:?}"))?[0];
        Ok(())
    }

    fn run_vertex_inner(
        &self,
        s: &mut Scratch,
        job: &VertexJob,
        push: Option<&AddressPush>,
        memory: Option<(Slot, &mut Vec<u8>)>,
    ) -> Result<Vec<VertexCapture>, String> {
        let d = &self.device;
        let n = job.invocations.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let stride_vec4 = 1 + job.varyings as usize + usize::from(job.extras);
        let push_bytes = push.map_or(0, |p| 8 * p.addresses);
        let extras_bit = u32::from(job.extras) << 15;
        let gs_key = if push.is_some() { job.varyings | extras_bit | push_bytes << 16 | 1 << 31 } else { job.varyings | extras_bit };
        let gs = self.harness_shader(Stage::Geometry, gs_key)?;
        let cmd = self.begin(s)?;
        let capture = self.buffer(s, (n * stride_vec4 * 16) as u64, vk::BufferUsageFlags::STORAGE_BUFFER)?;
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::GEOMETRY;
        let capture_set = if push.is_some() { ADDRESS_CAPTURE_SET } else { CAPTURE_SET };
        let mut storage = vec![(Slot { set: capture_set, binding: 0 }, capture)];
        let mut memory_buf = None;
        if let Some((slot, bytes)) = &memory {
            let buf = self.memory_buffer(s, bytes)?;
            storage.push((*slot, buf));
            memory_buf = Some(buf);
        }
        let (sets, dynamic) = self.resources(s, &job.uniforms, &job.textures, &storage, n, cmd, stages)?;
        let pushed = match push {
            Some(p) => self.address_blocks(s, p, n)?,
            None => vec![Vec::new(); n],
        };
        // Vertex buffer: one vertex per invocation, every declared location.
        let (vb, vstride) = self.vertex_inputs(s, &job.attribute_locations, &job.invocations, &job.uniforms, &dynamic)?;
        let vs = self.module(s, job.spirv)?;
        let gsm = self.module(s, &gs)?;
        let push_stages = if push.is_some() { stages } else { vk::ShaderStageFlags::GEOMETRY };
        let range = vk::PushConstantRange { stage_flags: push_stages, offset: 0, size: push_bytes + 4 };
        self.pipeline_layout(s, Some(range))?;
        self.vertex_geometry_pipeline(s, &[vs, gsm], &job.attribute_locations, vstride, vk::PrimitiveTopology::POINT_LIST, "vertex harness")?;
        // SAFETY: recording into this Scratch's command buffer, between begin and submit; every handle recorded is a live handle of this Scratch.
        unsafe {
            self.begin_point_draw(s, cmd, vb);
            for i in 0..n {
                self.bind_invocation_sets(s, cmd, &sets, &dynamic, i);
                let mut pc = pushed[i].clone();
                pc.extend_from_slice(&(i as u32).to_le_bytes());
                d.cmd_push_constants(cmd, s.pipeline_layout, push_stages, 0, &pc);
                d.cmd_draw(cmd, 1, 1, i as u32, 0);
            }
            d.cmd_end_rendering(cmd);
            let mb = vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::SHADER_WRITE).dst_access_mask(vk::AccessFlags::HOST_READ);
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::VERTEX_SHADER | vk::PipelineStageFlags::GEOMETRY_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[mb],
                &[],
                &[],
            );
        }
        self.submit(s, cmd)?;
        if let (Some((_, out)), Some(buf)) = (memory, memory_buf) {
            let len = out.len();
            *out = self.read_bytes(s, buf);
            out.truncate(len);
        }
        let bytes = self.read_bytes(s, capture);
        let f = |at: usize| -> [f32; 4] { std::array::from_fn(|c| f32::from_le_bytes(bytes[at + c * 4..at + c * 4 + 4].try_into().unwrap())) };
        Ok((0..n)
            .map(|i| {
                let base = i * stride_vec4 * 16;
                VertexCapture {
                    position: f(base),
                    varyings: (0..job.varyings as usize).map(|v| f(base + (v + 1) * 16)).collect(),
                    extras: job.extras.then(|| f(base + (job.varyings as usize + 1) * 16)),
                }
            })
            .collect())
    }

    /// Runs a fragment shader over 2×2 quads and captures every pixel.
    pub fn run_fragment(&self, job: &FragmentJob) -> Result<Vec<[PixelCapture; 4]>, String> {
        let mut s = Scratch::default();
        let r = self.run_fragment_inner(&mut s, job, None, None);
        self.destroy(s);
        r
    }

    /// [`Gpu::run_fragment`] with per-quad constants passed by device address.
    pub fn run_fragment_with_addresses(&self, job: &FragmentJob, push: &AddressPush) -> Result<Vec<[PixelCapture; 4]>, String> {
        let mut s = Scratch::default();
        let r = self.run_fragment_inner(&mut s, job, Some(push), None);
        self.destroy(s);
        r
    }

    /// [`Gpu::run_fragment_with_addresses`] with a writable storage buffer at `memory.0` holding
    /// `memory.1` (length a multiple of 4) before the draws (one per quad, in order; their
    /// fragments' stores may land in any order); `memory.1` receives its contents after them.
    /// Needs fragmentStoresAndAtomics.
    pub fn run_fragment_with_memory(
        &self,
        job: &FragmentJob,
        push: &AddressPush,
        memory: (Slot, &mut Vec<u8>),
    ) -> Result<Vec<[PixelCapture; 4]>, String> {
        if !self.fragment_stores {
            return Err(format!("{} lacks the fragmentStoresAndAtomics feature", self.device_name));
        }
        let mut s = Scratch::default();
        let r = self.run_fragment_inner(&mut s, job, Some(push), Some(memory));
        self.destroy(s);
        r
    }

    /// A host-visible storage buffer holding `bytes` (guest memory of the memexport harness).
    fn memory_buffer(&self, s: &mut Scratch, bytes: &[u8]) -> Result<usize, String> {
        let buf = self.buffer(s, bytes.len() as u64, vk::BufferUsageFlags::STORAGE_BUFFER)?;
        let b = &s.buffers[buf];
        if (b.size as usize) < bytes.len() {
            return Err("memory buffer smaller than its contents".into());
        }
        // SAFETY: mapped, coherent, in range (checked above).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.ptr, bytes.len()) };
        Ok(buf)
    }

    fn run_fragment_inner(
        &self,
        s: &mut Scratch,
        job: &FragmentJob,
        push: Option<&AddressPush>,
        memory: Option<(Slot, &mut Vec<u8>)>,
    ) -> Result<Vec<[PixelCapture; 4]>, String> {
        let d = &self.device;
        let n = job.quads.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let quads_per_row = (TARGET_WIDTH / 2) as usize;
        let (w, h) = (TARGET_WIDTH, (2 * n.div_ceil(quads_per_row) as u32).next_power_of_two().max(2));
        let vs_spirv = self.harness_shader(Stage::Vertex, job.varyings)?;
        let cmd = self.begin(s)?;
        let mut storage = Vec::new();
        let mut memory_buf = None;
        if let Some((slot, bytes)) = &memory {
            let buf = self.memory_buffer(s, bytes)?;
            storage.push((*slot, buf));
            memory_buf = Some(buf);
        }
        let (sets, dynamic) = self.resources(s, &job.uniforms, &job.textures, &storage, n, cmd, vk::ShaderStageFlags::FRAGMENT)?;
        let pushed = match push {
            Some(p) => Some(self.address_blocks(s, p, n)?),
            None => None,
        };
        // Vertex buffer: one triangle per quad, position (clip space, D3D +y up) then the
        // varyings. The triangle covers the whole 2×2 square and the scissor cuts it to the square:
        // all four pixels belong to one primitive, so none is a helper invocation (two triangles
        // per square made the other triangle's pixels helpers, whose memory loads lavapipe skips).
        // The triangle reaches 2 pixels past its square, so the viewport is larger than the
        // target (clipping at the viewport would split the triangles of the last column and row
        // again): twice as large, a power of two like the target, so that clip-space positions
        // stay dyadic and the varyings come out exact.
        let (vw, vh) = (2 * w, 2 * h);
        let nv = job.varyings as usize;
        let vstride = (1 + nv) * 16;
        let vb = self.buffer(s, (n * 3 * vstride) as u64, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        for (q, quad) in job.quads.iter().enumerate() {
            let (qx, qy) = ((q % quads_per_row) as f32 * 2.0, (q / quads_per_row) as f32 * 2.0);
            // Corners in pixel units relative to the quad's top-left pixel centre.
            for (k, &(cx, cy)) in [(0.0f32, 0.0f32), (4.0, 0.0), (0.0, 4.0)].iter().enumerate() {
                let mut vals = Vec::with_capacity(1 + nv);
                let (px, py) = (qx + cx, qy + cy);
                vals.push([px * 2.0 / vw as f32 - 1.0, 1.0 - py * 2.0 / vh as f32, 0.0, 1.0]);
                let (di, dj) = (cx - 0.5, cy - 0.5);
                let get = |v: &Vec<[f32; 4]>, l: usize| v.get(l).copied().unwrap_or([0.0; 4]);
                for l in 0..nv {
                    let (b, sx, sy) = (get(&quad.base, l), get(&quad.slope_x, l), get(&quad.slope_y, l));
                    vals.push(std::array::from_fn(|c| b[c] + di * sx[c] + dj * sy[c]));
                }
                self.write_f32s(s, vb, (q * 3 + k) * vstride, &vals);
            }
            for &(u, buf, stride) in &dynamic {
                let data = quad.uniforms.get(u).map(Vec::as_slice).unwrap_or(&[]);
                if data.len() > job.uniforms[u].len as usize {
                    return Err(format!("quad {q}: {} vec4s for a uniform of {}", data.len(), job.uniforms[u].len));
                }
                self.write_f32s(s, buf, q * stride as usize, data);
            }
        }
        // Targets.
        let colour_count = job.targets.iter().max().map_or(0, |&m| m + 1);
        let mut colours = Vec::new();
        for _ in 0..colour_count {
            colours.push(self.image(
                s,
                (w, h),
                1,
                vk::Format::R32G32B32A32_SFLOAT,
                vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
                vk::ImageAspectFlags::COLOR,
                TextureShape::Flat,
                1,
            )?);
        }
        let ds_aspect = vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL;
        let ds = self.image(
            s,
            (w, h),
            1,
            vk::Format::D32_SFLOAT_S8_UINT,
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
            ds_aspect,
            TextureShape::Flat,
            1,
        )?;
        let vs = self.module(s, &vs_spirv)?;
        let fs = self.module(s, job.spirv)?;
        let push_stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let range = push.map(|p| vk::PushConstantRange { stage_flags: push_stages, offset: 0, size: 8 * p.addresses.max(1) });
        self.pipeline_layout(s, range)?;
        let stage_infos = [
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::VERTEX).module(vs).name(c"main"),
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::FRAGMENT).module(fs).name(c"main"),
        ];
        let bindings = [vk::VertexInputBindingDescription { binding: 0, stride: vstride as u32, input_rate: vk::VertexInputRate::VERTEX }];
        let attrs: Vec<vk::VertexInputAttributeDescription> = (0..=nv as u32)
            .map(|l| vk::VertexInputAttributeDescription { location: l, binding: 0, format: vk::Format::R32G32B32A32_SFLOAT, offset: l * 16 })
            .collect();
        let vi = vk::PipelineVertexInputStateCreateInfo::default().vertex_binding_descriptions(&bindings).vertex_attribute_descriptions(&attrs);
        let ia = vk::PipelineInputAssemblyStateCreateInfo::default().topology(vk::PrimitiveTopology::TRIANGLE_LIST);
        let viewports = [vk::Viewport { x: 0.0, y: 0.0, width: vw as f32, height: vh as f32, min_depth: 0.0, max_depth: 1.0 }];
        let scissors = [vk::Rect2D { offset: vk::Offset2D { x: 0, y: 0 }, extent: vk::Extent2D { width: w, height: h } }];
        let vp = vk::PipelineViewportStateCreateInfo::default().viewports(&viewports).scissors(&scissors);
        let rs = vk::PipelineRasterizationStateCreateInfo::default()
            .depth_clamp_enable(true)
            .cull_mode(vk::CullModeFlags::NONE)
            .polygon_mode(vk::PolygonMode::FILL)
            .line_width(1.0);
        let ms = vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let stencil = vk::StencilOpState {
            fail_op: vk::StencilOp::KEEP,
            pass_op: vk::StencilOp::REPLACE,
            depth_fail_op: vk::StencilOp::KEEP,
            compare_op: vk::CompareOp::ALWAYS,
            compare_mask: 0xFF,
            write_mask: 0xFF,
            reference: 1,
        };
        let dss = vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(true)
            .depth_write_enable(true)
            .depth_compare_op(vk::CompareOp::ALWAYS)
            .stencil_test_enable(true)
            .front(stencil)
            .back(stencil);
        let blend: Vec<vk::PipelineColorBlendAttachmentState> =
            (0..colour_count).map(|_| vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA)).collect();
        let cb = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend);
        let dynamic_states = [vk::DynamicState::SCISSOR];
        let dyn_info = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        let formats: Vec<vk::Format> = (0..colour_count).map(|_| vk::Format::R32G32B32A32_SFLOAT).collect();
        let mut rendering = vk::PipelineRenderingCreateInfo::default()
            .color_attachment_formats(&formats)
            .depth_attachment_format(vk::Format::D32_SFLOAT_S8_UINT)
            .stencil_attachment_format(vk::Format::D32_SFLOAT_S8_UINT);
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stage_infos)
            .vertex_input_state(&vi)
            .input_assembly_state(&ia)
            .viewport_state(&vp)
            .rasterization_state(&rs)
            .multisample_state(&ms)
            .depth_stencil_state(&dss)
            .color_blend_state(&cb)
            .dynamic_state(&dyn_info)
            .layout(s.pipeline_layout)
            .push_next(&mut rendering);
        // SAFETY: the create info and every state struct it points to live on this stack frame through the call; the shader modules and layout are live handles of this Scratch, which owns the pipeline (destroyed by `destroy`).
        s.pipeline = unsafe { d.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
            .map_err(|(_, e)| format!("vkCreateGraphicsPipelines (fragment harness): {e:?}"))?[0];
        // Readback buffers.
        let px = (w * h) as u64;
        let colour_bufs: Vec<usize> =
            (0..colour_count).map(|_| self.buffer(s, px * 16, vk::BufferUsageFlags::TRANSFER_DST)).collect::<Result<_, _>>()?;
        let depth_buf = self.buffer(s, px * 4, vk::BufferUsageFlags::TRANSFER_DST)?;
        let stencil_buf = self.buffer(s, px, vk::BufferUsageFlags::TRANSFER_DST)?;
        // SAFETY: recording into this Scratch's command buffer, between begin and submit; every handle recorded is a live handle of this Scratch.
        unsafe {
            for &c in &colours {
                barrier(
                    d,
                    cmd,
                    s.images[c].image,
                    vk::ImageAspectFlags::COLOR,
                    1,
                    vk::ImageLayout::UNDEFINED,
                    vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                );
            }
            barrier(d, cmd, s.images[ds].image, ds_aspect, 1, vk::ImageLayout::UNDEFINED, vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
            let colour_att: Vec<vk::RenderingAttachmentInfo> = colours
                .iter()
                .map(|&c| {
                    vk::RenderingAttachmentInfo::default()
                        .image_view(s.images[c].view)
                        .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                        .load_op(vk::AttachmentLoadOp::CLEAR)
                        .store_op(vk::AttachmentStoreOp::STORE)
                        .clear_value(vk::ClearValue { color: vk::ClearColorValue { float32: [0.0; 4] } })
                })
                .collect();
            let ds_att = vk::RenderingAttachmentInfo::default()
                .image_view(s.images[ds].view)
                .image_layout(vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .clear_value(vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 0.0, stencil: 0 } });
            let area = vk::Rect2D { offset: vk::Offset2D { x: 0, y: 0 }, extent: vk::Extent2D { width: w, height: h } };
            let ri = vk::RenderingInfo::default()
                .render_area(area)
                .layer_count(1)
                .color_attachments(&colour_att)
                .depth_attachment(&ds_att)
                .stencil_attachment(&ds_att);
            d.cmd_begin_rendering(cmd, &ri);
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, s.pipeline);
            d.cmd_bind_vertex_buffers(cmd, 0, &[s.buffers[vb].buffer], &[0]);
            for q in 0..n {
                self.bind_invocation_sets(s, cmd, &sets, &dynamic, q);
                if let Some(pc) = &pushed {
                    d.cmd_push_constants(cmd, s.pipeline_layout, push_stages, 0, &pc[q]);
                }
                let (qx, qy) = ((q % quads_per_row) as i32 * 2, (q / quads_per_row) as i32 * 2);
                let square = vk::Rect2D { offset: vk::Offset2D { x: qx, y: qy }, extent: vk::Extent2D { width: 2, height: 2 } };
                d.cmd_set_scissor(cmd, 0, &[square]);
                d.cmd_draw(cmd, 3, 1, (q * 3) as u32, 0);
            }
            d.cmd_end_rendering(cmd);
            let extent = vk::Extent3D { width: w, height: h, depth: 1 };
            for (&c, &buf) in colours.iter().zip(&colour_bufs) {
                barrier(
                    d,
                    cmd,
                    s.images[c].image,
                    vk::ImageAspectFlags::COLOR,
                    1,
                    vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                );
                let region = vk::BufferImageCopy::default().image_subresource(layers(vk::ImageAspectFlags::COLOR)).image_extent(extent);
                d.cmd_copy_image_to_buffer(cmd, s.images[c].image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, s.buffers[buf].buffer, &[region]);
            }
            barrier(
                d,
                cmd,
                s.images[ds].image,
                ds_aspect,
                1,
                vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            );
            for (aspect, buf) in [(vk::ImageAspectFlags::DEPTH, depth_buf), (vk::ImageAspectFlags::STENCIL, stencil_buf)] {
                let region = vk::BufferImageCopy::default().image_subresource(layers(aspect)).image_extent(extent);
                d.cmd_copy_image_to_buffer(cmd, s.images[ds].image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, s.buffers[buf].buffer, &[region]);
            }
            // readbacks, and the fragment shaders' stores to guest memory
            let mb = vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ);
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::FRAGMENT_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[mb],
                &[],
                &[],
            );
        }
        self.submit(s, cmd)?;
        if let (Some((_, out)), Some(buf)) = (memory, memory_buf) {
            let len = out.len();
            *out = self.read_bytes(s, buf);
            out.truncate(len);
        }
        let colour_bytes: Vec<Vec<u8>> = colour_bufs.iter().map(|&b| self.read_bytes(s, b)).collect();
        let depth = self.read_bytes(s, depth_buf);
        let stencil = self.read_bytes(s, stencil_buf);
        let f = |b: &[u8], at: usize| f32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        Ok((0..n)
            .map(|q| {
                let (qx, qy) = ((q % quads_per_row) * 2, (q / quads_per_row) * 2);
                std::array::from_fn(|p| {
                    let (x, y) = (qx + (p & 1), qy + (p >> 1));
                    let at = y * w as usize + x;
                    PixelCapture {
                        written: stencil[at] != 0,
                        colors: job.targets.iter().map(|&t| std::array::from_fn(|c| f(&colour_bytes[t as usize], at * 16 + c * 4))).collect(),
                        depth: f(&depth, at * 4),
                    }
                })
            })
            .collect())
    }
}

fn range(aspect: vk::ImageAspectFlags, layers: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect,
        base_mip_level: 0,
        level_count: vk::REMAINING_MIP_LEVELS,
        base_array_layer: 0,
        layer_count: layers,
    }
}

fn layers(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers { aspect_mask: aspect, mip_level: 0, base_array_layer: 0, layer_count: 1 }
}

/// A full (all stages, all accesses) layout transition: the harness favours simplicity.
unsafe fn barrier(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    image: vk::Image,
    aspect: vk::ImageAspectFlags,
    layers: u32,
    from: vk::ImageLayout,
    to: vk::ImageLayout,
) {
    let all = vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE;
    let b = vk::ImageMemoryBarrier::default()
        .src_access_mask(all)
        .dst_access_mask(all)
        .old_layout(from)
        .new_layout(to)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(range(aspect, layers));
    d.cmd_pipeline_barrier(
        cmd,
        vk::PipelineStageFlags::ALL_COMMANDS,
        vk::PipelineStageFlags::ALL_COMMANDS,
        vk::DependencyFlags::empty(),
        &[],
        &[],
        &[b],
    );
}

/// The capture geometry shader: its input is the vertex output signature of every shrec vertex
/// shader (SV_Position + float4 TEXCOORD0..N-1 at locations 0..N-1, with `extras` the PointSize
/// and SV_CullDistance built-ins); it stores them at `(base + SV_PrimitiveID) * (N + 1 + extras)`
/// and emits nothing.
pub fn capture_gs_hlsl(varyings: u32, extras: bool) -> String {
    let mut s = String::from("// shrec verify: capture geometry shader\nstruct GsIn\n{\n    float4 pos : SV_Position;\n");
    for i in 0..varyings {
        s += &format!("    [[vk::location({i})]] float4 t{i} : TEXCOORD{i};\n");
    }
    if extras {
        s += "    [[vk::builtin(\"PointSize\")]] float psize : PSIZE;\n    float cull : SV_CullDistance;\n";
    }
    s += "};\nstruct GsOut { float4 pos : SV_Position; };\nstruct CaptureBase { uint base; };\n";
    s += "[[vk::push_constant]] CaptureBase capture_base;\n";
    s += &format!("[[vk::binding(0, {CAPTURE_SET})]] RWStructuredBuffer<float4> capture : register(u0, space{CAPTURE_SET});\n");
    s += "[maxvertexcount(1)]\nvoid main(point GsIn input[1], uint prim : SV_PrimitiveID, inout PointStream<GsOut> stream)\n{\n";
    s += &format!("    uint o = (capture_base.base + prim) * {};\n    capture[o] = input[0].pos;\n", varyings + 1 + u32::from(extras));
    for i in 0..varyings {
        s += &format!("    capture[o + {}] = input[0].t{i};\n", i + 1);
    }
    if extras {
        s += &format!("    capture[o + {}] = float4(input[0].psize, input[0].cull, 0, 0);\n", varyings + 1);
    }
    s += "}\n";
    s
}

/// [`capture_gs_hlsl`] for [`AddressPush`] jobs: the capture buffer at `set`, the draw's base
/// index at push-constant byte `offset` (after the shader's addresses).
pub fn capture_gs_hlsl_at(varyings: u32, extras: bool, set: u32, offset: u32) -> String {
    let base = capture_gs_hlsl(varyings, extras);
    let pad: String = (0..offset / 4).map(|k| format!("uint pad{k}; ")).collect();
    base.replace("struct CaptureBase { uint base; };", &format!("struct CaptureBase {{ {pad}uint base; }};"))
        .replace(&format!("register(u0, space{CAPTURE_SET})"), &format!("register(u0, space{set})"))
        .replace(&format!("[[vk::binding(0, {CAPTURE_SET})]]"), &format!("[[vk::binding(0, {set})]]"))
}

/// The fragment harness vertex shader: location 0 = clip-space position (D3D convention; DXC's
/// `-fvk-invert-y` flips it for Vulkan), locations 1..=N = varyings passed to TEXCOORD0..N-1.
pub fn quad_vs_hlsl(varyings: u32) -> String {
    let mut s = String::from("// shrec verify: fragment harness vertex shader\nstruct VsIn\n{\n    [[vk::location(0)]] float4 pos : POSITION;\n");
    for i in 0..varyings {
        s += &format!("    [[vk::location({})]] float4 a{i} : ATTR{i};\n", i + 1);
    }
    s += "};\nstruct VsOut\n{\n    float4 pos : SV_Position;\n";
    for i in 0..varyings {
        s += &format!("    [[vk::location({i})]] float4 v{i} : TEXCOORD{i};\n");
    }
    s += "};\nVsOut main(VsIn i)\n{\n    VsOut o;\n    o.pos = i.pos;\n";
    for i in 0..varyings {
        s += &format!("    o.v{i} = i.a{i};\n");
    }
    s += "    return o;\n}\n";
    s
}

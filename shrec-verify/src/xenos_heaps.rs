//! Sizes XenosRecomp's bindless heaps for lavapipe.
//!
//! The generated shaders declare the heaps as runtime-sized arrays (`Texture2D g_…Heap[]`, SPIR-V
//! `OpTypeRuntimeArray`). lavapipe (Mesa 22.3) sizes a stage's texture / sampler slots from the
//! array type of the shader variable, so a runtime-sized heap gets one slot: element 0 samples the
//! bound texture, a dynamic index above 0 reads an unbound slot (zeros / garbage, measured with two
//! textures on heap elements 0 and 1, whatever the layout's binding count). The harness therefore
//! gives those arrays the
//! length it binds before creating the module: the indexing code, the index values and the
//! descriptors are untouched, so what executes is the cache's shader with a sized declaration.

const OP_TYPE_INT: u32 = 21;
const OP_TYPE_IMAGE: u32 = 25;
const OP_TYPE_SAMPLER: u32 = 26;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
const OP_CONSTANT: u32 = 43;

fn words(bytes: &[u8]) -> Result<Vec<u32>, String> {
    if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
        return Err(format!("SPIR-V of {} bytes is not a module", bytes.len()));
    }
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Heap lengths the harness binds: texture elements per image dimension and sampler elements.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeapLens {
    pub d2: u32,
    pub d3: u32,
    pub cube: u32,
    pub samplers: u32,
}

/// Returns the module with every runtime array of images or samplers turned into an array of
/// its heap's length from `lens` (at least 1; images by their `Dim`: 2D, 3D, Cube, samplers).
/// Other runtime arrays (none in Xenos shaders) stay as they are.
pub fn size_heaps(spirv: &[u8], lens: HeapLens) -> Result<Vec<u8>, String> {
    let w = words(spirv)?;
    let mut bound = w[3];
    // Pass 1: which ids are image / sampler types (with their heap length), and an existing
    // 32-bit unsigned int type.
    let mut opaque = std::collections::BTreeMap::new();
    let mut uint = None;
    let mut i = 5;
    while i < w.len() {
        let (n, op) = ((w[i] >> 16) as usize, w[i] & 0xFFFF);
        if n == 0 || i + n > w.len() {
            return Err(format!("malformed SPIR-V instruction at word {i}"));
        }
        match op {
            OP_TYPE_IMAGE => {
                // Dim: 1 = 2D, 2 = 3D, 3 = Cube (1D shares the 2D heap in the Xenos ABI)
                let len = match w.get(i + 3) {
                    Some(2) => lens.d3,
                    Some(3) => lens.cube,
                    _ => lens.d2,
                };
                opaque.insert(w[i + 1], len.max(1));
            }
            OP_TYPE_SAMPLER => {
                opaque.insert(w[i + 1], lens.samplers.max(1));
            }
            OP_TYPE_INT if n == 4 && w[i + 2] == 32 && w[i + 3] == 0 => uint = uint.or(Some(w[i + 1])),
            _ => {}
        }
        i += n;
    }
    // Pass 2: copy, inserting the length constant (and an int type if needed) before the first
    // heap type that uses it; types must be declared before use, and the heaps come after their
    // element types, which come after no int use of ours.
    let mut out: Vec<u32> = w[..5].to_vec();
    let mut length_ids: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
    let mut i = 5;
    while i < w.len() {
        let (n, op) = ((w[i] >> 16) as usize, w[i] & 0xFFFF);
        if op == OP_TYPE_RUNTIME_ARRAY && n == 3 && opaque.contains_key(&w[i + 2]) {
            let len = opaque[&w[i + 2]];
            let len_id = match length_ids.get(&len) {
                Some(&id) => id,
                None => {
                    let ty = match uint {
                        Some(t) if out.len() > 5 && declared(&out, t) => t,
                        _ => {
                            let t = bound;
                            bound += 1;
                            out.extend([(4 << 16) | OP_TYPE_INT, t, 32, 0]);
                            uint = Some(t);
                            t
                        }
                    };
                    let id = bound;
                    bound += 1;
                    out.extend([(4 << 16) | OP_CONSTANT, ty, id, len]);
                    length_ids.insert(len, id);
                    id
                }
            };
            out.extend([(4 << 16) | OP_TYPE_ARRAY, w[i + 1], w[i + 2], len_id]);
        } else {
            out.extend_from_slice(&w[i..i + n]);
        }
        i += n;
    }
    out[3] = bound;
    Ok(out.iter().flat_map(|x| x.to_le_bytes()).collect())
}

/// Whether `id` is already the result of an OpTypeInt in `out` (so it may be used here).
fn declared(out: &[u32], id: u32) -> bool {
    let mut i = 5;
    while i < out.len() {
        let (n, op) = ((out[i] >> 16) as usize, out[i] & 0xFFFF);
        if op == OP_TYPE_INT && out[i + 1] == id {
            return true;
        }
        i += n.max(1);
    }
    false
}

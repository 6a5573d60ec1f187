/* shrec_runtime.h - C ABI of shrec-runtime (link libshrec_runtime_c.a or the shared library).
 *
 * A shrec cache stores SPIR-V as SMOL-V by default (`--spirv-encoding smolv`). These two calls
 * turn a stored blob back into a SPIR-V module, like aras-p/smol-v's GetDecodedBufferSize and
 * Decode, without any third-party source file. The input is untrusted: malformed data gives an
 * error, never a crash, and nothing past out_size is written.
 *
 *   size_t n = shrec_smolv_decoded_size(blob, blob_size);
 *   if (n == 0) { ... not SMOL-V ... }
 *   uint8_t* spirv = malloc(n);
 *   if (shrec_smolv_decode(blob, blob_size, spirv, n) != SHREC_OK) { ... }
 */
#ifndef SHREC_RUNTIME_H
#define SHREC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SHREC_OK = 0,
    SHREC_ERROR_NULL = 1,         /* a null pointer with a non-zero size */
    SHREC_ERROR_BAD_SMOLV = 2,    /* not a SMOL-V buffer, or damaged */
    SHREC_ERROR_OUT_TOO_SMALL = 3 /* out_size is below shrec_smolv_decoded_size() */
};

/* Size in bytes of the SPIR-V module the SMOL-V buffer decodes to; 0 when it is not SMOL-V. */
size_t shrec_smolv_decoded_size(const uint8_t* smolv, size_t smolv_size);

/* Decodes into out (out_size bytes, at least shrec_smolv_decoded_size()). Returns SHREC_OK or
 * one of the SHREC_ERROR_ codes. */
int shrec_smolv_decode(const uint8_t* smolv, size_t smolv_size, uint8_t* out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* SHREC_RUNTIME_H */

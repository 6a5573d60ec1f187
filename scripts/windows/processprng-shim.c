/* Test setup for running shrec.exe under Wine 8 (scripts/windows-wine-check.sh); never part of
 * shrec. Rust's standard library on Windows takes its random bytes (HashMap seeds) from
 * ProcessPrng in bcryptprimitives.dll, which every supported Windows has and Wine 8 lacks. This
 * DLL, built with mingw and placed beside shrec.exe, exports ProcessPrng over
 * BCryptGenRandom (the system RNG), which Wine has. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}

#!/usr/bin/env bash
# Windows as a tested platform, under Wine (a `.ci/run` step; test tooling, not part of shrec):
#  1. cross-builds shrec.exe (x86_64-pc-windows-gnu) once;
#  2. takes the Windows DXC shrec provisions (slangpy 0.43.1: dxcompiler.dll and dxil.dll,
#     DXC 1.9.2602, sha256-pinned as in src/dxc.rs) and DXC 1.6.2112 (compushady 0.17.5), which
#     shrec must refuse;
#  3. runs the main job on tests/corpus with Linux shrec and, under Wine, with shrec.exe and the
#     Windows DXC (dxil.dll beside it; paths with a drive letter and backslashes);
#  4. checks: exit 0; the sorted key lists are equal; every DXIL container of the Windows cache
#     is signed by DXC's validator and shrec's src/pack/dxil_hash.rs recomputes exactly that hash
#     (shrec-verify's cache-check), and dxil.dll itself signs each one again to the same bytes
#     (scripts/windows/dxil-resign); the .cpp compiles with x86_64-w64-mingw32-g++; a second
#     build replaces the first one's files; DXC worker processes (--isolate-dxc) survive
#     crashing workers and stop one at the CPU-time limit; the cargo example's and the CMake
#     example's programs (cross-built) decode every shader; DXC 1.6 is refused before any work,
#     naming its version.
# Needs: wine64 (Debian's Wine 8), mingw-w64 (gcc, g++, ar), cmake, python3 with pip, the Rust target
# x86_64-pc-windows-gnu. Wine 8 lacks ProcessPrng (Rust's std needs it): a shim DLL built here
# from scripts/windows/processprng-shim.c is placed beside shrec.exe.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/windows-wine
WINE=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
export WINEPREFIX=$OUT/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
rm -rf "$OUT/linux" "$OUT/windows" "$OUT/old"
mkdir -p "$OUT/bin" "$OUT/dxc" "$OUT/dxc-old" "$OUT/wheels" "$OUT/linux" "$OUT/windows" "$OUT/old"

fail() { echo "windows-wine-check: FAILED: $*" >&2; exit 1; }
# timed CMD...: runs CMD, prints its time, returns CMD's exit status (callers check it)
timed() { local t0=$SECONDS rc=0; "$@" || rc=$?; echo "-- $((SECONDS - t0)) s: $*"; return $rc; }
# `Z:\...` : how Wine names a Linux path (its drive Z: is /)
winpath() { printf 'Z:%s' "${1//\//\\}"; }

# The wheels and DLLs, pinned. The Windows pins must be the ones src/dxc.rs provisions.
NEW_WHEEL=slangpy-0.43.1-cp311-cp311-win_amd64.whl
NEW_WHEEL_SHA=3da28207fa1f173c81b22efc1cd02e4804066b975a18749b1a7b09c0708018d6
NEW_DXC_SHA=b86a738ece4c05dbe2d9bbb29668a2ccb28a0740773c9b027cdc61e8d07b4d75
NEW_DXIL_SHA=058f2f52a680c38b223a5615b7df969def21f77e577562e5099d971dede992de
OLD_WHEEL=compushady-0.17.5-cp311-cp311-win_amd64.whl
OLD_WHEEL_SHA=f06b761e4597f3472d7d16e49b0bc7f26c9067c3ddd548c7420ca513f6964795
OLD_DXC_SHA=64e5feb3db313bb3455fd5ca0aa9dbc95c3c4bc48c56c43d740a97b67ad54119
for pin in "$NEW_WHEEL" "$NEW_WHEEL_SHA" "$NEW_DXC_SHA" "$NEW_DXIL_SHA"; do
    grep -q "$pin" src/dxc.rs || fail "$pin is not what src/dxc.rs provisions on Windows"
done

# wheel_member WHEEL SHA MEMBER DEST SHA: pip download (once), check, extract, check.
fetch_wheel() {
    local spec=$1 wheel=$2 sha=$3
    if [ ! -f "$OUT/wheels/$wheel" ]; then
        python3 -m pip download --no-deps --only-binary=:all: --platform win_amd64 --python-version 3.11 \
            --disable-pip-version-check -q -d "$OUT/wheels" "$spec"
    fi
    echo "$sha  $OUT/wheels/$wheel" | sha256sum -c --quiet || fail "$wheel: sha256"
}
extract() {
    local wheel=$1 member=$2 dest=$3 sha=$4
    python3 -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
        "$OUT/wheels/$wheel" "$member" "$dest"
    echo "$sha  $dest" | sha256sum -c --quiet || fail "$dest: sha256"
}
fetch_wheel slangpy==0.43.1 "$NEW_WHEEL" "$NEW_WHEEL_SHA"
extract "$NEW_WHEEL" slangpy/dxcompiler.dll "$OUT/dxc/dxcompiler.dll" "$NEW_DXC_SHA"
extract "$NEW_WHEEL" slangpy/dxil.dll "$OUT/dxc/dxil.dll" "$NEW_DXIL_SHA"
fetch_wheel compushady==0.17.5 "$OLD_WHEEL" "$OLD_WHEEL_SHA"
extract "$OLD_WHEEL" compushady/backends/dxcompiler.dll "$OUT/dxc-old/dxcompiler.dll" "$OLD_DXC_SHA"

# shrec.exe (built once), the ProcessPrng shim beside it; Linux shrec and the checker. Both
# shrec builds have the `test-hooks` feature (SHREC_TEST_KEEP_ZERO_DXIL_HASH below; the Linux
# one then reuses what the test step built).
timed cargo build --release --target x86_64-pc-windows-gnu --bin shrec --features test-hooks
cp target/x86_64-pc-windows-gnu/release/shrec.exe "$OUT/bin/"
x86_64-w64-mingw32-gcc -shared -O2 -o "$OUT/bin/bcryptprimitives.dll" scripts/windows/processprng-shim.c -lbcrypt
# dxil-resign: its own small workspace (hassle-rs only), its own target folder. The `com` crate
# under hassle-rs calls advapi32's registry functions without linking it: added at the end of
# the link line (shrec.exe gets it through other crates).
timed env CARGO_TARGET_DIR="$OUT/resign" CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS="-C link-arg=-ladvapi32" cargo build --release --target x86_64-pc-windows-gnu \
    --manifest-path scripts/windows/dxil-resign/Cargo.toml
timed cargo build --release --bin shrec -p shrec --features test-hooks
timed cargo build --release -p shrec-verify --bin cache-check
CHECK=$ROOT/target/release/cache-check

# The main job on Linux (reference key list).
timed target/release/shrec build tests/corpus -o "$OUT/linux/all.cpp" --no-cache -q

# The main job on Windows, under Wine: drive-letter paths with backslashes, from the output folder.
set +e
# SHREC_TEST_KEEP_ZERO_DXIL_HASH: shrec does not fill a zero hash, so every non-zero one below
# was written by DXC's validator. (DXC 1.9 signs even without dxil.dll, with the validator built
# into dxcompiler.dll: a one-shader run without it gave a non-zero hash too. With dxil.dll beside
# it shrec loads it first; dxil-resign below has dxil.dll itself sign every container again.)
# --spirv-backend dxc: the Windows DXC compiles every corpus shader for both targets (the default
# direct SPIR-V back end runs in the second build below).
(cd "$OUT/windows" && timed env SHREC_TEST_KEEP_ZERO_DXIL_HASH=1 "$WINE" "$OUT/bin/shrec.exe" build "$(winpath "$ROOT/tests/corpus")" -o all.cpp \
    --dxc "$(winpath "$OUT/dxc/dxcompiler.dll")" --spirv-backend dxc --no-cache -q --report report.json) >"$OUT/windows/log.txt" 2>&1
rc=$?
set -e
cat "$OUT/windows/log.txt"
[ "$rc" = 0 ] || fail "shrec.exe build exited $rc (log: $OUT/windows/log.txt)"

"$CHECK" "$OUT/linux/all.cpp" --keys "$OUT/linux/keys.txt"
"$CHECK" "$OUT/windows/all.cpp" --keys "$OUT/windows/keys.txt" --signed-dxil --extract "$OUT/windows/dxil"
# dxil.dll itself signs each container again (hash zeroed first): it must give the same bytes,
# so the hash dxil_hash recomputed above is exactly the one dxil.dll writes.
cp "$OUT/resign/x86_64-pc-windows-gnu/release/dxil-resign.exe" "$OUT/bin/bcryptprimitives.dll" "$OUT/dxc/"
(cd "$OUT/dxc" && timed "$WINE" ./dxil-resign.exe "$(winpath "$OUT/windows/dxil")")
diff -u "$OUT/linux/keys.txt" "$OUT/windows/keys.txt" || fail "the Windows build's keys differ from the Linux build's"
echo "keys: $(wc -l <"$OUT/windows/keys.txt") in both builds, identical"

timed x86_64-w64-mingw32-g++ -std=c++17 -Wall -Wextra -pedantic -Werror -c "$OUT/windows/all.cpp" -o "$OUT/windows/all.o"

# The same build again into the same folder: every output file is replaced (the previous set is
# kept under temporary names until the new one is in place, and no handle may stay open on a
# file being replaced: Windows refuses the rename where it has no POSIX semantics). This one
# has every default, so its SPIR-V comes from the direct back end.
set +e
(cd "$OUT/windows" && timed "$WINE" "$OUT/bin/shrec.exe" build "$(winpath "$ROOT/tests/corpus/xenos")" -o all.cpp \
    --dxc "$(winpath "$OUT/dxc/dxcompiler.dll")" --no-cache -q) >"$OUT/windows/again.txt" 2>&1
rc=$?
set -e
cat "$OUT/windows/again.txt"
[ "$rc" = 0 ] || fail "a second build over the first one's files exited $rc"
"$CHECK" "$OUT/windows/all.cpp" --keys "$OUT/windows/keys-again.txt"
[ "$(wc -l <"$OUT/windows/keys-again.txt")" -gt 0 ] || fail "the second build's cache is empty"

# DXC worker processes on Windows (Job Objects; src/dxc_worker/windows.rs). The `test-hooks`
# build's workers abort on their 3rd request (SHREC_TEST_DXC_ABORT_AT) or spin on the CPU on it
# (SHREC_TEST_DXC_SPIN_AT, on one shader's second compilation): the batch goes on, and each failure names its cause. (Wine enforces
# no Job Object memory limit, so --dxc-memory-limit is not checked here.)
mkdir -p "$OUT/workers"
SPIN_SHADER="tests/corpus/xenos/LibXenonProject+snes9x-gx/source/xenon/shaders/simple.vs__VSSimple.bin"
set +e
(cd "$OUT/workers" && timed env SHREC_TEST_DXC_ABORT_AT=3 "$WINE" "$OUT/bin/shrec.exe" build "$(winpath "$ROOT/tests/corpus/xenos")" \
    -o crash.cpp --dxc "$(winpath "$OUT/dxc/dxcompiler.dll")" --spirv-backend dxc --no-cache -q --isolate-dxc -j 2) >"$OUT/workers/crash.txt" 2>&1
rc=$?
(cd "$OUT/workers" && timed env SHREC_TEST_DXC_SPIN_AT=2 "$WINE" "$OUT/bin/shrec.exe" build "$(winpath "$ROOT/$SPIN_SHADER")" \
    -o spin.cpp --dxc "$(winpath "$OUT/dxc/dxcompiler.dll")" --spirv-backend dxc --no-cache -q --isolate-dxc --dxc-time-limit 1 -j 1) >"$OUT/workers/spin.txt" 2>&1
rc_spin=$?
set -e
[ "$rc" = 2 ] || fail "--isolate-dxc with crashing workers exited $rc, expected 2 (log: $OUT/workers/crash.txt)"
crashed=$(grep -c "crashed while compiling this shader (worker process exit code: 0xc0000409" "$OUT/workers/crash.txt" || true)
failed=$(grep -o "^shrec: [0-9]* of [0-9]* shaders failed" "$OUT/workers/crash.txt" || true)
[ "$crashed" -gt 0 ] || fail "no shader names its worker's crash (log: $OUT/workers/crash.txt)"
echo "isolate-dxc, workers aborting on every 3rd request: $failed; $crashed compilations name the crash"
[ "$rc_spin" = 2 ] || fail "--isolate-dxc --dxc-time-limit 1 with a spinning worker exited $rc_spin, expected 2 (log: $OUT/workers/spin.txt)"
limited=$(grep -c "used more than its time limit of 1 s of CPU time on this shader (--dxc-time-limit; worker process exit code: 6)" "$OUT/workers/spin.txt" || true)
[ "$limited" -gt 0 ] || { cat "$OUT/workers/spin.txt"; fail "no shader names the CPU-time limit"; }
echo "isolate-dxc, a worker spinning on its 2nd request: $limited compilation stopped at the 1 s CPU-time limit"

# The cargo example's program on Windows: its build script runs on this (Linux) host and builds
# the cache with shrec the library; the program, cross-built, looks up and decodes every shader
# (zstd, SMOL-V) through shrec-runtime under Wine. The target folder is the one
# tests/integration/embed_cargo.rs builds the example in with `--target <host>`, so the build
# script and shrec (its build-dependency) are already compiled.
timed env CARGO_TARGET_DIR="$ROOT/target/embed-example" SHREC_EXAMPLE_INPUT="$ROOT/tests/corpus" \
    cargo build --locked --target x86_64-pc-windows-gnu --manifest-path examples/cargo-consumer/Cargo.toml
cp "$ROOT/target/embed-example/x86_64-pc-windows-gnu/debug/shrec-cargo-consumer.exe" "$OUT/bin/"
set +e
(cd "$OUT/bin" && timed "$WINE" ./shrec-cargo-consumer.exe) >"$OUT/windows/consumer.txt" 2>&1
rc=$?
set -e
tail -n 3 "$OUT/windows/consumer.txt"
[ "$rc" = 0 ] || fail "the cargo example's program exited $rc under Wine (log: $OUT/windows/consumer.txt)"
looked_up=$(grep -c " dxil [0-9]* bytes spirv " "$OUT/windows/consumer.txt" || true)
[ "$looked_up" = "$(wc -l <"$OUT/linux/keys.txt")" ] || fail "the cargo example decoded $looked_up shaders, expected $(wc -l <"$OUT/linux/keys.txt")"
echo "cargo example on Windows: $looked_up shaders looked up and decoded"

# The CMake example through build/shrec.cmake, cross-compiled for Windows: CMake and shrec run on
# this host (a MinGW toolchain: CMAKE_SYSTEM_NAME=Windows), the program is linked statically with
# zstd's decompressor built from the zstd-sys crate's sources, and run under Wine.
ZSTD_SRC=$(cargo metadata --format-version 1 --locked | python3 -c 'import json, os, sys
m = json.load(sys.stdin)
print(os.path.join(os.path.dirname(next(p["manifest_path"] for p in m["packages"] if p["name"] == "zstd-sys")), "zstd", "lib"))')
rm -rf "$OUT/zstd" "$OUT/cmake"
mkdir -p "$OUT/zstd"
for c in "$ZSTD_SRC"/common/*.c "$ZSTD_SRC"/decompress/*.c; do
    x86_64-w64-mingw32-gcc -O2 -DZSTD_DISABLE_ASM -c "$c" -o "$OUT/zstd/$(basename "$c" .c).o"
done
x86_64-w64-mingw32-ar rcs "$OUT/zstd/libzstd.a" "$OUT"/zstd/*.o
cmake -S examples/cmake -B "$OUT/cmake" -DCMAKE_SYSTEM_NAME=Windows -DCMAKE_CXX_COMPILER=x86_64-w64-mingw32-g++ \
    -DCMAKE_EXE_LINKER_FLAGS=-static -DSHREC_EXECUTABLE="$ROOT/target/release/shrec" \
    -DZSTD_INCLUDE_DIR="$ZSTD_SRC" -DZSTD_LIBRARY="$OUT/zstd/libzstd.a" >/dev/null
timed cmake --build "$OUT/cmake"
set +e
(cd "$OUT/cmake" && "$WINE" ./shader_cache_example.exe) >"$OUT/windows/cmake.txt" 2>&1
rc=$?
set -e
tail -n 1 "$OUT/windows/cmake.txt"
[ "$rc" = 0 ] || fail "the CMake example's program exited $rc under Wine (log: $OUT/windows/cmake.txt)"
grep -q "^checked $(wc -l <"$OUT/linux/keys.txt") shaders, 0 failed" "$OUT/windows/cmake.txt" || fail "the CMake example did not check every shader"

# DXC 1.6.2112 is refused before any work: exit 1, its version named, no output written.
set +e
(cd "$OUT/old" && "$WINE" "$OUT/bin/shrec.exe" build "$(winpath "$ROOT/tests/corpus")" -o all.cpp \
    --dxc "$(winpath "$OUT/dxc-old/dxcompiler.dll")" --no-cache) >"$OUT/old/log.txt" 2>&1
rc=$?
set -e
cat "$OUT/old/log.txt"
[ "$rc" = 1 ] || fail "shrec.exe with DXC 1.6 exited $rc, expected 1"
grep -q "is DXC 1.6" "$OUT/old/log.txt" || fail "the refusal does not name DXC 1.6"
grep -q "older than the 1.8 shrec needs" "$OUT/old/log.txt" || fail "the refusal does not name the minimum"
grep -q "DirectXShaderCompiler/releases" "$OUT/old/log.txt" || fail "the refusal does not say where to get DXC"
[ ! -e "$OUT/old/all.cpp" ] || fail "output written despite the refusal"
echo "windows-wine-check: all checks passed"

#!/usr/bin/env bash
# Wall and CPU time of XenosRecomp (built by scripts/xenosrecomp-oracle.sh) against `shrec build`
# on the same input, same machine, same run, rounds interleaved (XR, shrec, shrec -z22, ...).
#
#   scripts/xenosrecomp-bench.sh XR_OUT_DIR INPUT [ROUNDS]
#
# Configurations, each on all cores and pinned to one core (taskset -c 0: TBB, XenosRecomp's
# thread pool, and shrec's default -j both follow the affinity mask):
#   xr            XenosRecomp generic, directory mode (SPIR-V only: its Linux build has no DXIL)
#   shrec         shrec build --no-cache --targets spirv -q (zstd level 12, shrec's default)
#   shrec-z22     the same with --zstd-level 22 (XenosRecomp compresses at ZSTD_maxCLevel() = 22)
# Prints per configuration the median and minimum of wall, user+sys CPU, and the load average
# before and after (the machine is shared: read the numbers with it).
# Environment: SHREC (default target/release/shrec), DXC_LIB (passed to shrec as --dxc; default
# shrec's own lookup).
set -euo pipefail
die() { echo "xenosrecomp-bench: error: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: $0 XR_OUT_DIR INPUT [ROUNDS]"
out=$1 input=$2 rounds=${3:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shrec=${SHREC:-$here/target/release/shrec}
xr="$out/generic/XenosRecomp"
[ -x "$xr" ] || die "no $xr (scripts/xenosrecomp-oracle.sh build XR_SRC $out)"
[ -x "$shrec" ] || die "no $shrec (cargo build --release)"
[ -e "$input" ] || die "no input $input"
[ -x /usr/bin/time ] || die "/usr/bin/time missing (Debian: apt-get install time)"
command -v taskset >/dev/null || die "taskset missing (util-linux)"
dxc_args=()
[ -n "${DXC_LIB:-}" ] && dxc_args=(--dxc "$DXC_LIB")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # name cpus cmd... ; appends "wall cpu" to $tmp/name
  local name=$1 cpus=$2
  shift 2
  local pin=()
  [ "$cpus" = 1 ] && pin=(taskset -c 0)
  /usr/bin/time -f '%e %U %S' -o "$tmp/t" "${pin[@]}" "$@" >/dev/null 2>"$tmp/err" \
    || { cat "$tmp/err" >&2; die "$name failed: $*"; }
  awk '{printf "%s %.2f\n", $1, $2 + $3}' "$tmp/t" >>"$tmp/$name"
}

echo "input: $input ($(find "$input" -type f | wc -l) files); $(nproc) cores; rounds: $rounds"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for cpus in all 1; do
  for ((r = 0; r < rounds; r++)); do
    run "xr-$cpus" "$cpus" "$xr" "$input" "$tmp/xr.cpp" "$out/generic/shader_common.h"
    run "shrec-$cpus" "$cpus" "$shrec" build "$input" -o "$tmp/sh.cpp" --no-cache --targets spirv -q "${dxc_args[@]}"
    run "shrec-z22-$cpus" "$cpus" "$shrec" build "$input" -o "$tmp/sh22.cpp" --no-cache --targets spirv -q --zstd-level 22 "${dxc_args[@]}"
  done
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
medmin() { # file column -> "median min"
  sort -n -k"$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%.2f %.2f", m, v[1]}'
}
printf '%-16s %-5s %18s %18s\n' config cores 'wall s (med/min)' 'cpu s (med/min)'
for cpus in all 1; do
  for name in xr shrec shrec-z22; do
    read -r wm wn <<<"$(medmin "$tmp/$name-$cpus" 1)"
    read -r cm cn <<<"$(medmin "$tmp/$name-$cpus" 2)"
    printf '%-16s %-5s %8s / %-8s %8s / %-8s\n' "$name" "$cpus" "$wm" "$wn" "$cm" "$cn"
  done
  read -r xw _ <<<"$(medmin "$tmp/xr-$cpus" 1)"
  read -r sw _ <<<"$(medmin "$tmp/shrec-$cpus" 1)"
  read -r xc _ <<<"$(medmin "$tmp/xr-$cpus" 2)"
  read -r sc _ <<<"$(medmin "$tmp/shrec-$cpus" 2)"
  awk -v xw="$xw" -v sw="$sw" -v xc="$xc" -v sc="$sc" -v c="$cpus" \
    'BEGIN {printf "cores=%s: XenosRecomp/shrec wall %.2f (>1: shrec faster), shrec/XenosRecomp CPU %.2f\n", c, xw / sw, sc / xc}'
done
for f in xr.cpp sh.cpp; do
  printf '%s: %s bytes, %s\n' "$f" "$(stat -c %s "$tmp/$f" 2>/dev/null || wc -c <"$tmp/$f")" \
    "$(grep -o 'g_spirvCacheCompressedSize = [0-9]*' "$tmp/$f" | head -n1)"
done

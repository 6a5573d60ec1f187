#!/bin/sh
# Runs every fuzz target (or the ones named) to the issue's acceptance bar: 10 million executions
# or one hour of CPU time on one core, whichever comes first; prints one summary line per target.
#   fuzz/campaign.sh [TARGET...]       logs: fuzz/logs/TARGET.log, summary: fuzz/logs/summary.txt
# libFuzzer's -max_total_time is wall-clock time, which on a shared machine buys less than an
# hour of CPU: a target whose pass ends before either bar is resumed (from its grown corpus) for
# the CPU time and executions still missing, measured with /usr/bin/time, until one bar is met.
# SHREC_FUZZ_RUNS / SHREC_FUZZ_CPU_SECONDS change the bars (e.g. to finish an earlier session).
# SHREC_FUZZ_SANITIZER=none (the default here) builds without AddressSanitizer: shrec's fuzzed
# code is safe Rust (no `unsafe` outside the memory map, the thread clock and DXC loading), so a
# bug shows as a panic, an abort, a timeout or the RSS limit, all of which libFuzzer catches;
# without ASan the targets run about three times faster. Set it to `address` to use ASan.
set -u
cd "$(dirname "$0")/.."
mkdir -p fuzz/logs
targets=${*:-$(ls fuzz/fuzz_targets | sed 's/\.rs$//')}
run_bar=${SHREC_FUZZ_RUNS:-10000000}
cpu_bar=${SHREC_FUZZ_CPU_SECONDS:-3600}
for t in $targets; do
    log=fuzz/logs/$t.log
    : >"$log"
    runs=0 cpu=0 wall=0 passes=0 rc=0
    while [ "$runs" -lt "$run_bar" ] && [ "$cpu" -lt "$cpu_bar" ]; do
        passes=$((passes + 1))
        SHREC_FUZZ_SANITIZER=${SHREC_FUZZ_SANITIZER:-none} /usr/bin/time -f '%e %U %S' -o "$log.time" \
            fuzz/run.sh "$t" -runs=$((run_bar - runs)) -max_total_time=$((cpu_bar - cpu)) -print_final_stats=1 >>"$log" 2>&1
        rc=$?
        done_runs=$(grep -a -E '^Done [0-9]+ runs' "$log" | tail -1 | awk '{print $2}')
        read -r e u s <"$log.time" || true
        cpu=$((cpu + ${u%.*} + ${s%.*}))
        wall=$((wall + ${e%.*}))
        if [ "$rc" -ne 0 ] || [ -z "$done_runs" ]; then
            break
        fi
        runs=$((runs + done_runs))
    done
    echo "$t: exit $rc, $runs runs in $passes pass(es), $wall s wall, $cpu s CPU: $(grep -a -E '^Done [0-9]+ runs' "$log" | tr '\n' ';')" | tee -a fuzz/logs/summary.txt
done

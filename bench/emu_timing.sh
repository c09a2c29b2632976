#!/usr/bin/env bash
# `weir emu`'s timing fidelity (issue 8: every packet within 50 us of its
# modelled departure): iperf3 (Linux to Linux, TCP) through the emulator at
# RATE with DELAY each way, for SECS seconds; prints the emulator's timing
# report and the machine's load. BW limits iperf3's sending rate (e.g.
# "300M": bursts at the link rate with gaps, instead of a standing queue).
# Usage: bench/emu_timing.sh [BUILD_DIR]
#   env: RATE (50Mbit), DELAY (10ms), QUEUE (1000), SECS (8), BW (unset:
#   bulk), EMU_ARGS (extra `weir emu` options, e.g. "--rt-prio 0 --spin-us 0",
#   "--napi", "--pin", "--busy"). The report gives the fraction within 50 us,
#   p99, p99.9 and max of (write start - modelled departure).
# With --busy (dedicated-core mode) the emulator's one thread takes a CPU
# (--cpu N, default the last) and iperf3 client and server are pinned to the
# others with taskset, so the senders never compete with the polling thread.
# RPS=auto (with --busy) also steers both TUN devices' receive processing to
# those CPUs (rps_cpus): a TUN write then only queues the packet for another
# CPU instead of running the receiving stack's work (an ACK's processing and
# the burst it releases) inside the emulator's write. It is off by default:
# on this 2-core machine it helps at 1 Gbit/s and hurts at 50 Mbit/s
# (docs/performance.md). RPS=MASK sets a hex CPU mask in either mode.
set -u
BUILD=${1:-build/default}
WEIR=$(readlink -f "${WEIR:-$BUILD/tools/weir/weir}")
RATE=${RATE:-50Mbit}; DELAY=${DELAY:-10ms}; QUEUE=${QUEUE:-1000}; SECS=${SECS:-8}
. "$(dirname "$0")/../tests/interop/lib.sh"
interop_init emu_timing
command -v iperf3 >/dev/null || interop_skip "no iperf3"
PIN=()
case " ${EMU_ARGS:-} " in
  *" --busy "*)
    ncpu=$(nproc)
    emu_cpu=$(sed -n 's/.*--cpu[ =]\([0-9]*\).*/\1/p' <<<"${EMU_ARGS:-}")
    emu_cpu=${emu_cpu:-$((ncpu - 1))}
    others=$(seq 0 $((ncpu - 1)) | grep -vx "$emu_cpu" | paste -sd,)
    [ -n "$others" ] && PIN=(taskset -c "$others")
    rps_mask=0
    for c in ${others//,/ }; do rps_mask=$((rps_mask | (1 << c))); done
    [ "${RPS:-}" = auto ] && RPS=$(printf %x "$rps_mask")
    ;;
esac
A=$(ns_add a); B=$(ns_add b)
tun_add "$A" ta 10.9.0.1/24
tun_add "$B" tb 10.9.0.2/24
if [ -n "${RPS:-}" ] && [ "$RPS" != 0 ]; then
  [ "$RPS" = auto ] && fail "RPS=auto needs EMU_ARGS with --busy"
  # `ip netns exec` mounts the namespace's own sysfs, where its devices are.
  ip netns exec "$A" sh -c "echo $RPS > /sys/class/net/ta/queues/rx-0/rps_cpus" || fail "rps_cpus"
  ip netns exec "$B" sh -c "echo $RPS > /sys/class/net/tb/queues/rx-0/rps_cpus" || fail "rps_cpus"
fi
link_toml "$WORK/link.toml" "rate = \"$RATE\"" "delay = \"$DELAY\"" "queue = $QUEUE"
# shellcheck disable=SC2086
bg emu "$WEIR" emu --a "$A:ta" --b "$B:tb" --link "$WORK/link.toml" --json "$WORK/emu.json" ${EMU_ARGS:-}
EMU=$LAST_PID
wait_for 10 grep -q running "$WORK/emu.log" || fail "weir emu did not start"
bg iperfd ip netns exec "$B" "${PIN[@]}" iperf3 -s -1 -p 5201
wait_for 10 sh -c "ip netns exec '$B' ss -ltn | grep -q 5201" || fail "iperf3 server"
load0=$(cut -d' ' -f1 /proc/loadavg)
timeout $((SECS + 15)) ip netns exec "$A" "${PIN[@]}" iperf3 -c 10.9.0.2 -p 5201 -t "$SECS" ${BW:+-b "$BW"} -J >"$WORK/iperf.json" ||
  fail "iperf3 client"
load1=$(cut -d' ' -f1 /proc/loadavg)
kill -INT "$EMU"; wait "$EMU"
python3 - "$WORK/iperf.json" <<'P'
import json, sys
j = json.load(open(sys.argv[1]))
print("iperf3 goodput %.1f Mbit/s" % (j["end"]["sum_received"]["bits_per_second"] / 1e6))
P
echo "link $RATE, $DELAY each way, queue $QUEUE, iperf3 ${BW:-bulk} for ${SECS}s; load average $load0 -> $load1;" \
  "EMU_ARGS='${EMU_ARGS:-}'${PIN[*]:+ iperf3 under ${PIN[*]}}${RPS:+, rps_cpus $RPS}"
sed -n '/^timing error/,$p' "$WORK/emu.log"

#!/usr/bin/env bash
# Linux BBR v1 against Linux CUBIC on an emulated path (issue 7): the lab's
# fair-cubic-vs-bbr-2 (scenarios/fairness) replayed on real stacks, to check
# weir's BBR-vs-CUBIC shares against the kernel's own BBR.
#
# Path: `weir emu` between two namespaces, RATE (100 Mbit/s) each way, DELAY
# (20 ms) each way = 40 ms RTT, a drop-tail queue of QUEUE packets (330 = 1
# BDP of 1514-byte frames) in both directions. Two iperf3 flows from A to B:
# CUBIC starts first, BBR START_GAP seconds later (5 s, as the lab's 2-flow
# file), both end at DURATION (40 s); shares are counted over the lab's
# window, MEASURE_FROM (15 s) to the end, from iperf3's 1 s intervals at the
# receiver. The lab differs only in its 1 ms access links per sender.
#
# Linux's BBR paces itself (sk_pacing_status SK_PACING_NEEDED) without fq;
# the TUN's qdisc stays the namespace default. The script prints the
# algorithm iperf3 reports for each sender, the emulator's timing and the
# load average (the machine is shared: real-time results are noisy).
#
# Usage: bench/bbr_vs_cubic_linux.sh [BUILD_DIR]
#   env: RUNS (1), PER (1: flows per algorithm, iperf3 -P), RATE, DELAY,
#   QUEUE, DURATION, START_GAP, MEASURE_FROM,
#   FIRST ("cubic": which algorithm starts first), EMU_ARGS. Needs root.
set -u
BUILD=${1:-build/default}
WEIR=$(readlink -f "${WEIR:-$BUILD/tools/weir/weir}")
RUNS=${RUNS:-1}
RATE=${RATE:-100Mbit}
DELAY=${DELAY:-20ms}
QUEUE=${QUEUE:-330}
DURATION=${DURATION:-40}
START_GAP=${START_GAP:-5}
MEASURE_FROM=${MEASURE_FROM:-15}
FIRST=${FIRST:-cubic}
PER=${PER:-1}
command -v iperf3 >/dev/null || { echo "SKIPPED: no iperf3"; exit 77; }
. "$(dirname "$0")/../tests/interop/lib.sh"
interop_init bbrcubic
modprobe tcp_bbr 2>/dev/null
grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control || interop_skip "no tcp_bbr"
A=$(ns_add a); B=$(ns_add b)
tun_add "$A" ta 10.9.0.1/24; tun_add "$B" tb 10.9.0.2/24
# Room for a 2-BDP window (plus BBR's probing) on both ends.
for ns in "$A" "$B"; do
  ip netns exec "$ns" sysctl -qw net.ipv4.tcp_rmem="4096 131072 16777216" net.ipv4.tcp_wmem="4096 16384 16777216"
done
link_toml "$WORK/link.toml" "rate = \"$RATE\"" "delay = \"$DELAY\"" "queue = $QUEUE"
SECOND=bbr; [ "$FIRST" = bbr ] && SECOND=cubic

for run in $(seq "$RUNS"); do
  # shellcheck disable=SC2086
  bg "emu$run" "$WEIR" emu --a "$A:ta" --b "$B:tb" --link "$WORK/link.toml" --json "$WORK/emu$run.json" ${EMU_ARGS:-}
  EMU=$LAST_PID
  wait_for 10 grep -q running "$WORK/emu$run.log" || fail "weir emu did not start"
  bg "s1-$run" ip netns exec "$B" iperf3 -s -1 -p 5201 -J --logfile "$WORK/s1-$run.json"
  bg "s2-$run" ip netns exec "$B" iperf3 -s -1 -p 5202 -J --logfile "$WORK/s2-$run.json"
  sleep 1
  load0=$(cut -d' ' -f1-3 /proc/loadavg)
  bg "c1-$run" ip netns exec "$A" iperf3 -c 10.9.0.2 -p 5201 -C "$FIRST" -P "$PER" -t "$DURATION" -i 1 -J --logfile "$WORK/c1-$run.json"
  C1=$LAST_PID
  sleep "$START_GAP"
  bg "c2-$run" ip netns exec "$A" iperf3 -c 10.9.0.2 -p 5202 -C "$SECOND" -P "$PER" -t $((DURATION - START_GAP)) -i 1 -J --logfile "$WORK/c2-$run.json"
  C2=$LAST_PID
  wait "$C1" "$C2"
  sleep 1
  kill -INT "$EMU"; wait "$EMU"
  load1=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "run $run: load average at start $load0, at end $load1"
  python3 - "$WORK" "$run" "$FIRST" "$SECOND" "$START_GAP" "$MEASURE_FROM" "$PER" <<'P' || fail "could not read the results"
import json, sys
work, run, first, second, gap, t0 = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), float(sys.argv[6])
per = int(sys.argv[7])
def window_bytes(path, offset):
    j = json.load(open(path))
    total = 0.0
    for iv in j["intervals"]:
        s = iv["sum"]
        start, end = s["start"] + offset, s["end"] + offset
        if end <= t0:
            continue
        frac = (end - max(start, t0)) / (end - start)
        total += s["bytes"] * frac
    rx = j["end"]["sum_received"]["bytes"]
    retx = j["end"]["sum_sent"].get("retransmits", 0)
    return total, rx, retx
# Receiver-side intervals (the server's log) count delivered bytes.
b1, rx1, _ = window_bytes(f"{work}/s1-{run}.json", 0.0)
b2, rx2, _ = window_bytes(f"{work}/s2-{run}.json", gap)
_, _, r1 = window_bytes(f"{work}/c1-{run}.json", 0.0)
_, _, r2 = window_bytes(f"{work}/c2-{run}.json", gap)
tot = b1 + b2
span = None
e = json.load(open(f"{work}/s1-{run}.json"))["intervals"][-1]["sum"]["end"]
span = e - t0
print(f"  window {t0:.0f}-{e:.0f} s: {first} {b1*8/span/1e6:.1f} Mbit/s ({100*b1/tot:.1f} %), "
      f"{second} {b2*8/span/1e6:.1f} Mbit/s ({100*b2/tot:.1f} %); {per} flow(s) each")
algo = lambda p: json.load(open(p))["end"].get("sender_tcp_congestion", "?")
print(f"  sender algorithms (iperf3): {algo(f'{work}/c1-{run}.json')}, {algo(f'{work}/c2-{run}.json')}; "
      f"retransmitted segments: {first} {r1}, {second} {r2}")
ej = json.load(open(f"{work}/emu{run}.json"))
ab, ba = ej["a_to_b"], ej["b_to_a"]
print(f"  emu: a->b delivered {ab['delivered']} dropped(queue) {ab.get('drop_queue', '?')}; "
      f"within 50 us {100*ab['timing']['within_50us']:.1f} / {100*ba['timing']['within_50us']:.1f} %")
P
done
echo DONE

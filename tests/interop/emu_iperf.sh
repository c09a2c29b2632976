#!/usr/bin/env bash
# The emulator holds its configured rate: iperf3 (Linux to Linux) through
# `weir emu` at 50 Mbit/s. The link model counts whole IP datagrams, so the
# TCP goodput iperf3 reports, scaled by 1500/1448 (IP bytes per payload byte
# at full-sized segments with timestamps), must be within 2 % of the rate.
set -u
. "$(dirname "$0")/lib.sh"
interop_init emu_iperf
command -v iperf3 >/dev/null || interop_skip "no iperf3"
A=$(ns_add a); B=$(ns_add b)
tun_add "$A" ta 10.9.0.1/24
tun_add "$B" tb 10.9.0.2/24
RATE_MBIT=${RATE_MBIT:-50}
link_toml "$WORK/link.toml" "rate = \"${RATE_MBIT}Mbit\"" "delay = \"5ms\"" "queue = 200"
bg emu "$WEIR" emu --a "$A:ta" --b "$B:tb" --link "$WORK/link.toml" --json "$WORK/emu.json"
EMU=$LAST_PID
wait_for 10 grep -q running "$WORK/emu.log" || fail "weir emu did not start"
bg iperfd ip netns exec "$B" iperf3 -s -1 -p 5201
wait_for 10 sh -c "ip netns exec '$B' ss -ltn | grep -q 5201" || fail "iperf3 server"
timeout 20 ip netns exec "$A" iperf3 -c 10.9.0.2 -p 5201 -t 6 -O 2 -J >"$WORK/iperf.json" || fail "iperf3 client"
kill -INT "$EMU"; wait "$EMU"
# RATE_TOL: 0.02 by hand and in bench/interop.sh; ctest runs this serially
# with a wider bound because a shared CI machine's load moves a real-time
# measurement (seen: -2.4 % with the lab running beside it).
TOL=${RATE_TOL:-0.02}
python3 - "$WORK/iperf.json" "$RATE_MBIT" "$TOL" <<'P' || fail "rate not held"
import json, sys
j = json.load(open(sys.argv[1])); rate = float(sys.argv[2]) * 1e6; tol = float(sys.argv[3])
good = j["end"]["sum_received"]["bits_per_second"]
wire = good * 1500 / 1448
print("goodput %.2f Mbit/s, on the wire %.2f Mbit/s, configured %.0f Mbit/s (%.2f%%)" % (good / 1e6, wire / 1e6, rate / 1e6, 100 * (wire / rate - 1)))
assert abs(wire / rate - 1) <= tol, "emulator rate off by more than %.1f%%" % (100 * tol)
P
echo PASS

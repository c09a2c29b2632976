#!/usr/bin/env bash
# The emulator holds its configured rate: iperf3 (Linux to Linux, TCP bulk)
# through `weir emu` at RATE_MBIT (50) Mbit/s, within RATE_TOL (0.02).
#
# What is compared, exactly:
#  - the link model serialises whole IP datagrams (src/sim/link.cc: a packet
#    of N IP bytes occupies the link N*8/rate), so at a saturated link the
#    TCP payload rate is rate * MSS_eff / (MSS_eff + IP and TCP headers).
#    Headers: 20 (IPv4) + 20 (TCP) + 12 when net.ipv4.tcp_timestamps is on
#    in the sender's namespace (NOP NOP TS), so 1448 payload in 1500 bytes
#    with timestamps, 1460 in 1500 without; MSS_eff is the MTU minus those.
#  - the goodput is the median of the receiver's per-second intervals (the
#    iperf3 server's own, its -J output), over the intervals after slow start
#    (-O OMIT seconds are flagged "omitted" and left out) and without the
#    last, partial interval; so neither slow start nor the end of the test
#    (whose queue drains after the sender stopped) is in the average.
#  - the sender runs CUBIC (-C cubic), whatever the machine's default: the
#    rate is only observable while the link is saturated. With BBR (this
#    machine's default) the sender drains the queue on purpose (ProbeBW's
#    0.75 gain, ProbeRTT) and the link idles: seen as single intervals at
#    42-47 Mbit/s with the others at 48.27. With CUBIC a 200-packet queue
#    (3x the 62-packet BDP) never empties after a loss halving (x0.7).
# Measured at load average 15-16 on the shared 2-core VM: -0.00 % in four
# of four runs (every interval 48.26-48.27 Mbit/s against 48.267 expected).
set -u
. "$(dirname "$0")/lib.sh"
interop_init emu_iperf
command -v iperf3 >/dev/null || interop_skip "no iperf3"
A=$(ns_add a); B=$(ns_add b)
tun_add "$A" ta 10.9.0.1/24
tun_add "$B" tb 10.9.0.2/24
RATE_MBIT=${RATE_MBIT:-50}
SECS=${SECS:-6}
OMIT=${OMIT:-2}
link_toml "$WORK/link.toml" "rate = \"${RATE_MBIT}Mbit\"" "delay = \"5ms\"" "queue = 200"
bg emu "$WEIR" emu --a "$A:ta" --b "$B:tb" --link "$WORK/link.toml" --json "$WORK/emu.json"
EMU=$LAST_PID
wait_for 10 grep -q running "$WORK/emu.log" || fail "weir emu did not start"
# The server writes its own intervals (-J) to its log once the test ends.
bg iperfd ip netns exec "$B" iperf3 -s -1 -p 5201 -J
IPERFD=$LAST_PID
wait_for 10 sh -c "ip netns exec '$B' ss -ltn | grep -q 5201" || fail "iperf3 server"
timeout $((SECS + OMIT + 14)) ip netns exec "$A" iperf3 -c 10.9.0.2 -p 5201 -C cubic -t "$SECS" -O "$OMIT" -J \
  >"$WORK/iperf.json" || fail "iperf3 client"
for _ in $(seq 50); do kill -0 "$IPERFD" 2>/dev/null || break; sleep 0.1; done
kill -INT "$EMU"; wait "$EMU"
TS=$(ip netns exec "$A" cat /proc/sys/net/ipv4/tcp_timestamps)
MTU=$(ip -n "$A" -o link show ta | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
TOL=${RATE_TOL:-0.02}
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORK/iperfd.log" "$RATE_MBIT" "$TOL" "$TS" "$MTU" <<'P' || fail "rate not held"
import json, sys
srv = json.load(open(sys.argv[1]))
rate, tol = float(sys.argv[2]) * 1e6, float(sys.argv[3])
hdr = 20 + 20 + (12 if sys.argv[4].strip() != "0" else 0)
mtu = int(sys.argv[5])
payload = mtu - hdr
expect = rate * payload / mtu  # TCP payload bits per second at a full link
ivs = [i["sum"] for i in srv["intervals"] if not i["sum"].get("omitted", False)]
# The last interval is cut short by the end of the test: not a full second.
ivs = [s for s in ivs if s["seconds"] > 0.9]
assert len(ivs) >= 3, "too few whole measured intervals: %d" % len(ivs)
# The median interval: a second in which the TCP sender left the link idle
# (a slow-start overshoot still being repaired after the omitted seconds was
# seen in CI once: 24.13 then 48.26-48.27 Mbit/s) says nothing about the
# emulator's rate, and one such second must not decide the test. No second
# may exceed the rate either: an emulator that runs fast shows in every one.
rates = sorted(s["bytes"] * 8 / s["seconds"] for s in ivs)
good = rates[len(rates) // 2] if len(rates) % 2 else (rates[len(rates) // 2 - 1] + rates[len(rates) // 2]) / 2
per = " ".join("%.2f" % (s["bits_per_second"] / 1e6) for s in ivs)
print("receiver goodput, median of %d intervals (%s): %.3f Mbit/s; expected %.3f Mbit/s = %.0f Mbit/s * %d/%d (%d header bytes); %+.2f%%"
      % (len(ivs), per, good / 1e6, expect / 1e6, rate / 1e6, payload, mtu, hdr, 100 * (good / expect - 1)))
assert abs(good / expect - 1) <= tol, "emulator rate off by more than %.1f%%" % (100 * tol)
assert rates[-1] <= expect * (1 + tol), "an interval above the configured rate: %.3f Mbit/s" % (rates[-1] / 1e6)
P
echo PASS

#!/usr/bin/env bash
# Seed 004 replayed for real, shortened (bench/seed004.sh is the full
# experiment): weir CUBIC sends HYSTART_MB megabytes (default 6: an exit
# at the BDP comes after ~1.9 MB, one a round later after ~3.8 MB; any
# later exit fails the attempt either way) through `weir emu`
# configured as the seed's path, 50 Mbit/s, 75 ms each way, 619-packet
# drop-tail queue, no random loss, to curl (Linux) whose receive buffer
# starts at 16 MB so the window never limits the sender.
#
# What must hold (weir's slow-start exit, from `weir ss`'s
# hystart_exit:REASON@CWND, sampled while the transfer runs, cross-checked
# with weir's MIB TcpExtTCPHystart{Train,Delay}{Detect,Cwnd}):
#  - slow start ends by a HyStart detector (ack-train or delay), not by a
#    loss (a loss first would have made weir record "loss": the record is
#    sticky), and nothing had been retransmitted when the exit was seen;
#  - in the round where cwnd crosses the path's BDP or the one after: at a
#    cwnd within [BDP/2, 2.2 BDP], BDP from the link file:
#    50e6 b/s * 0.150 s / (8 * 1500 B) = 625 packets. The ACK train ends
#    slow start when one round's ACKs span delay_min/2, i.e. at cwnd ~BDP
#    (lab: 636; the seed's Linux: 632; weir here: 636-639). If a gap breaks
#    that round's train, the round doubles cwnd to ~2 BDP and builds a
#    standing queue of ~BDP/2 packets (75 ms, well over the 16 ms delay
#    threshold), which the delay detector sees in the first ACKs of the next
#    round: exit at ~2.06 BDP (1288 measured, nothing retransmitted). Below
#    BDP/2 a detector misread the path (a stall faking 16 ms of queue);
#    beyond 2.2 BDP the exit came two rounds late, after the 619-packet
#    queue had overflowed (BDP + queue = 1244), and the band was missed.
#  - the transfer is byte-exact (sha256).
#
# How robust this is on a loaded machine: the assertions read weir's own
# record of what it decided, not timing measured from outside, and accept
# both detectors; weir and the emulator run under SCHED_FIFO (weir 40 below
# the emulator's 50, as bench/seed004.sh does) and ctest runs the test
# alone (RUN_SERIAL). What load can still do is break the ACK train in two
# consecutive rounds or fake a delay, so the test makes up to ATTEMPTS
# (default 4) runs, each with a fresh emulator and a fresh weir, passes at
# the first in-band exit, and prints every run's exit and the emulator's
# timing. Measured (30 Nov, GCC build): load 15 on the 2-core VM, 5 of 5
# runs by ACK train at 636-639; load 23-24, delay at 1288 (in band) and at
# 2493 and 2541 (both two rounds late, after the queue overflowed). So it
# holds where CI runs it (an otherwise idle machine, the test alone), and
# fails on a machine loaded past ~10 runnable tasks per core.
#
# HYSTART_CHECK=consistency (the sanitizer build's registration) keeps the
# transfer, the ss/MIB agreement and "an exit was recorded", not the band:
# under ASan+UBSan weir handles each ACK several times slower and reads
# larger batches stamped with one clock reading, so its RTT samples carry
# its own processing delay (measured, Debug ASan build at load 23: delay
# at 328, just inside the band; an older ASan binary: delay at 1288, 1437,
# loss at 2454).
set -u
. "$(dirname "$0")/lib.sh"
interop_init hystart
command -v curl >/dev/null || interop_skip "no curl"
MB=${HYSTART_MB:-6}
ATTEMPTS=${ATTEMPTS:-4}
RATE_BPS=50000000 OWD_MS=75 QUEUE=619 PKT=1500
BDP=$((RATE_BPS * 2 * OWD_MS / 1000 / 8 / PKT))  # packets in flight that fill the pipe: 625
LO=$((BDP / 2)) HI=$((BDP * 22 / 10))
A=$(ns_add a); B=$(ns_add b)
tun_add "$A" ta 10.9.0.1/24; tun_add "$B" tb 10.9.0.2/24
ip -n "$A" route add 192.0.2.0/24 via 10.9.0.2 dev ta
ip netns exec "$B" sysctl -qw net.ipv4.ip_forward=1
# The receiver's buffer: with the default 128 KB start Linux's autotuning
# trails a slow-starting sender by an RTT at 150 ms (docs/lab.md).
ip netns exec "$A" sysctl -qw net.ipv4.tcp_rmem="4096 16777216 33554432"
link_toml "$WORK/link.toml" "rate = \"$((RATE_BPS / 1000000))Mbit\"" "delay = \"${OWD_MS}ms\"" "queue = $QUEUE"
mkdir -p "$WORK/www" && make_file "$WORK/www/blob" "$MB"
WANT=$(sha "$WORK/www/blob")
RT=() SRT=()
if chrt -f 40 true 2>/dev/null; then RT=(chrt -f 40); SRT=(chrt -f 30); fi
echo "path: 50 Mbit/s, RTT $((2 * OWD_MS)) ms, queue $QUEUE -> BDP $BDP packets; band [$LO, $HI]; ${MB} MB;" \
  "load $(cut -d' ' -f1-3 /proc/loadavg); sender ${RT[*]:-normal priority}"

attempt() {  # attempt N: 0 when weir's exit is in the band
  local n=$1 line reason cwnd retr
  rm -f "$WORK/w.sock"
  bg "weir$n" "${RT[@]}" "$WEIR" serve --netns "$B" --tun we --addr 192.0.2.1/24 --peer 192.0.2.2/24 \
    --app http "$WORK/www" --sysctl net.ipv4.tcp_congestion_control=cubic --control "$WORK/w.sock"
  local ws=$LAST_PID
  wait_for 10 test -S "$WORK/w.sock" || fail "weir serve did not start"
  bg "emu$n" "$WEIR" emu --a "$A:ta" --b "$B:tb" --link "$WORK/link.toml" --json "$WORK/emu$n.json"
  local emu=$LAST_PID
  wait_for 10 grep -q running "$WORK/emu$n.log" || fail "weir emu did not start"
  wait_for 10 ip netns exec "$A" curl -sf -o /dev/null -r 0-0 "http://192.0.2.1/blob" || fail "weir serve unreachable"
  "$WEIR" ss --control "$WORK/w.sock" --nstat >"$WORK/nstat0"
  ip netns exec "$A" curl -sf --max-time 60 -o "$WORK/got" "http://192.0.2.1/blob" & local xfer=$!
  # Sample until weir has recorded its slow-start exit (sticky for the
  # connection's life) or the transfer ends.
  : >"$WORK/ss$n"
  "${SRT[@]}" bash -c "while kill -0 $xfer 2>/dev/null; do '$WEIR' ss --control '$WORK/w.sock' >>'$WORK/ss$n' 2>/dev/null;
    grep -q hystart_exit: '$WORK/ss$n' && break; sleep 0.01; done"
  wait "$xfer" || fail "curl through emu (attempt $n)"
  [ "$(sha "$WORK/got")" = "$WANT" ] || fail "sha256 mismatch (attempt $n)"
  "$WEIR" ss --control "$WORK/w.sock" --nstat >"$WORK/nstat1"
  kill -INT "$emu"; wait "$emu"
  kill -TERM "$ws"; wait "$ws" || fail "weir serve exit status"
  line=$(grep -m1 -o 'bytes_retrans:[0-9]*.*hystart_exit:[a-z+-]*@[0-9]*' "$WORK/ss$n")
  [ -n "$line" ] || { echo "attempt $n: no slow-start exit seen in ${MB} MB"; return 1; }
  reason=$(sed -E 's/.*hystart_exit:([a-z+-]+)@.*/\1/' <<<"$line")
  cwnd=$(sed -E 's/.*hystart_exit:[a-z+-]+@([0-9]+)/\1/' <<<"$line")
  retr=$(sed -E 's/^bytes_retrans:([0-9]+).*/\1/' <<<"$line")
  python3 - "$WORK/nstat0" "$WORK/nstat1" "$WORK/emu$n.json" "$reason" "$cwnd" <<'P' >"$WORK/mib$n" || return 1
import json, re, sys
a, b = (dict((k, int(v)) for k, v in re.findall(r"^(\S+)\s+(\d+)", open(f).read(), re.M)) for f in sys.argv[1:3])
d = {k: b[k] - a.get(k, 0) for k in b if "Hystart" in k}
reason, cwnd = sys.argv[4], int(sys.argv[5])
j = json.load(open(sys.argv[3]))
print("MIB %s; emu within 50 us data/ACK %.1f/%.1f%%, ACK gaps > 2 ms made by the emulator: %s" % (
    " ".join("%s=%d" % (k[len("TcpExtTCPHystart"):], v) for k, v in sorted(d.items())),
    100 * j["b_to_a"]["timing"]["within_50us"], 100 * j["a_to_b"]["timing"]["within_50us"],
    j["a_to_b"]["timing"].get("gaps_over_2ms", {}).get("added", "?")))
# The MIB must agree with ss: the detector that ss names counted once, at that cwnd.
key = {"ack-train": "Train", "delay": "Delay"}.get(reason)
if key:
    n = d.get("TcpExtTCPHystart%sDetect" % key, 0)
    assert n == 1 and d.get("TcpExtTCPHystart%sCwnd" % key, 0) == cwnd, "MIB disagrees with ss: %s" % d
P
  echo "attempt $n: exit by $reason at cwnd $cwnd, bytes_retrans $retr when seen; $(cat "$WORK/mib$n"); load $(cut -d' ' -f1 /proc/loadavg)"
  [ "${HYSTART_CHECK:-band}" = consistency ] && return 0
  [ "$reason" = ack-train ] || [ "$reason" = delay ] || return 1
  [ "$retr" = 0 ] && [ "$cwnd" -ge "$LO" ] && [ "$cwnd" -le "$HI" ]
}

for n in $(seq "$ATTEMPTS"); do
  if attempt "$n"; then echo PASS; exit 0; fi
done
fail "no in-band slow-start exit by a HyStart detector in $ATTEMPTS attempts"

#!/usr/bin/env bash
# RFC 3168 ECN between weir and Linux through `weir emu` marking CE at a
# step threshold (`ecn_threshold`, RFC 8257 §3.1): 20 Mbit/s, 5 ms each way,
# CE on ECN-capable arrivals at 20 queued packets, a 1000-packet queue, no
# loss. Both ends ask for ECN (tcp_ecn=1). In each direction the marks must
# come back as ECE and cut the sender's window before the queue overflows:
#   weir -> Linux: curl downloads from `weir serve --app http`; Linux's
#     receiver counts the CE packets (IpExtInCEPkts), weir's sender the
#     packets delivered with ECE (TcpExtTCPDeliveredCE) and no retransmission;
#   Linux -> weir: `weir fetch` downloads from python3 -m http.server with
#     CUBIC; weir counts the CE packets, Linux the ECE-acknowledged ones.
# Both senders sit on B's side (weir serve in B, python in B), so the data
# and the marks cross the emulator's b->a direction. The emulator may lose
# no packet (the queue never fills while the marks are answered) and both
# files must arrive byte-exact.
set -u
. "$(dirname "$0")/lib.sh"
interop_init emu_ecn
command -v curl >/dev/null || interop_skip "no curl"
command -v nstat >/dev/null || interop_skip "no nstat (iproute2)"
XT=${XT:-120}
A=$(ns_add a); B=$(ns_add b)
tun_add "$A" ta 10.9.0.1/24
tun_add "$B" tb 10.9.0.2/24
for ns in "$A" "$B"; do
  ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.tcp_ecn=1 net.ipv4.tcp_congestion_control=cubic
done
ip -n "$A" route add 192.0.2.0/24 via 10.9.0.2 dev ta
ip -n "$B" route add 198.51.100.0/24 via 10.9.0.1 dev tb
MB=${EMU_MB:-8}
link_toml "$WORK/link.toml" 'rate = "20Mbit"' 'delay = "5ms"' 'queue = 1000' 'ecn_threshold = 20'
bg emu "$WEIR" emu --a "$A:ta" --b "$B:tb" --link "$WORK/link.toml" --json "$WORK/emu.json"
EMU=$LAST_PID
wait_for 10 grep -q running "$WORK/emu.log" || fail "weir emu did not start"
mkdir -p "$WORK/www"; make_file "$WORK/www/blob" "$MB"
WANT=$(sha "$WORK/www/blob")
nstat_of() { ip netns exec "$1" nstat -az "$2" | awk -v k="$2" '$1 == k { print $2 }'; }
counter() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$2"; }

# weir -> Linux.
ip netns exec "$A" nstat -n >/dev/null
bg weir "$WEIR" serve --netns "$B" --tun wb --addr 192.0.2.1/24 --peer 192.0.2.2/24 \
  --sysctl net.ipv4.tcp_ecn=1 --control "$WORK/ctl.sock" --app http "$WORK/www"
WS=$LAST_PID
wait_for 10 test -S "$WORK/ctl.sock" || fail "weir serve did not start"
timeout "$XT" ip netns exec "$A" curl -sSf --max-time "$XT" -o "$WORK/got" http://192.0.2.1/blob || fail "curl through emu"
[ "$(sha "$WORK/got")" = "$WANT" ] || fail "sha256 mismatch (weir -> Linux)"
kill -TERM "$WS"; wait "$WS" || fail "weir serve exit status"
ce_linux=$(nstat_of "$A" IpExtInCEPkts); dce_weir=$(counter TcpExtTCPDeliveredCE "$WORK/weir.log")
rtx_weir=$(counter TcpRetransSegs "$WORK/weir.log")
echo "weir -> Linux: Linux received ${ce_linux:-0} CE packets; weir delivered $dce_weir packets with ECE, retransmitted $rtx_weir"
[ "${ce_linux:-0}" -gt 0 ] || fail "no CE mark reached Linux (weir's data not ECT(0)?)"
[ "$dce_weir" -gt 0 ] || fail "weir saw no ECE from Linux"
[ "$rtx_weir" -eq 0 ] || fail "weir retransmitted through a path that only marks"

# Linux -> weir.
ip netns exec "$B" nstat -n >/dev/null
(cd "$WORK/www" && exec ip netns exec "$B" python3 -m http.server -b 0.0.0.0 8082) >"$WORK/py.log" 2>&1 &
PIDS+=($!)
tun_add "$A" wa 198.51.100.2/24
wait_for 10 ip netns exec "$B" curl -sf -o /dev/null "http://127.0.0.1:8082/" || fail "python http.server"
timeout "$XT" "$WEIR" fetch --netns "$A" --tun wa --addr 198.51.100.1/24 --sysctl net.ipv4.tcp_ecn=1 \
  -o "$WORK/got2" --sha256 "$WANT" --timeout $((XT - 1)) "http://10.9.0.2:8082/blob" >"$WORK/fetch.log" 2>&1 \
  || fail "weir fetch through emu"
ce_weir=$(counter IpExtInCEPkts "$WORK/fetch.log"); dce_linux=$(nstat_of "$B" TcpExtTCPDeliveredCE)
echo "Linux -> weir: weir received $ce_weir CE packets; Linux delivered ${dce_linux:-0} packets with ECE"
[ "$ce_weir" -gt 0 ] || fail "no CE mark reached weir (Linux's data not ECT?)"
[ "${dce_linux:-0}" -gt 0 ] || fail "Linux saw no ECE from weir"

kill -INT "$EMU"; wait "$EMU"
python3 - "$WORK/emu.json" <<'P' || fail "the emulator dropped packets or marked none"
import json, sys
j = json.load(open(sys.argv[1]))
for d in ("a_to_b", "b_to_a"):
    s = j[d]
    print("emu %s: ce_marked %d, drop_queue %d, max_queue %d" % (d, s["ce_marked"], s["drop_queue"], s["max_queue_packets"]))
    assert s["drop_queue"] == 0 and s["drop_loss"] == 0
assert j["b_to_a"]["ce_marked"] > 0  # both transfers send data from B to A
P
echo PASS

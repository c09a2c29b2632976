#!/usr/bin/env bash
# The seed-004 experiment replayed on real stacks (issue 8): Linux CUBIC and
# weir CUBIC each send MB megabytes through `weir emu` configured as the
# seed's path (50 Mbit/s, 150 ms RTT, 619-packet drop-tail buffer), and the
# slow-start exit is read from the sender: the first `ssthresh` that `ss -ti`
# (Linux) or `weir ss` (weir) shows, with the cwnd at that sample.
# Usage: bench/seed004.sh [BUILD_DIR]   env: MB (20). Needs root.
set -u
BUILD=${1:-build/default}
WEIR=$(readlink -f "${WEIR:-$BUILD/tools/weir/weir}")
MB=${MB:-20}
. "$(dirname "$0")/../tests/interop/lib.sh"
interop_init seed004
mkdir -p "$WORK/www" && make_file "$WORK/www/blob" "$MB"
A=$(ns_add a); B=$(ns_add b)
tun_add "$A" ta 10.9.0.1/24; tun_add "$B" tb 10.9.0.2/24
ip -n "$A" route add 192.0.2.0/24 via 10.9.0.2 dev ta
ip netns exec "$B" sysctl -qw net.ipv4.ip_forward=1
link_toml "$WORK/link.toml" 'rate = "50Mbit"' 'delay = "75ms"' 'queue = 619'
bg emu "$WEIR" emu --a "$A:ta" --b "$B:tb" --link "$WORK/link.toml" --json "$WORK/emu.json"
EMU=$LAST_PID
wait_for 10 grep -q running "$WORK/emu.log" || fail "weir emu did not start"

# sample CMD... : every 20 ms while the transfer runs, into $WORK/samples
sample() {
  : >"$WORK/samples"
  while kill -0 "$XFER" 2>/dev/null; do "$@" >>"$WORK/samples" 2>/dev/null; sleep 0.02; done
}
first_exit() {  # the first sample line with ssthresh: "cwnd ssthresh" ("- -" if none)
  cp "$WORK/samples" "$WORK/../seed004-$1.samples" 2>/dev/null
  python3 - "$WORK/samples" <<'P'
import re, sys
for line in open(sys.argv[1]):
    c, t = re.search(r"(?:^|\s)cwnd:(\d+)", line), re.search(r"(?:^|\s)ssthresh:(\d+)", line)
    if c and t:
        print(c.group(1), t.group(1)); break
else:
    print("- -")
P
}

(cd "$WORK/www" && exec ip netns exec "$B" python3 -m http.server -b 0.0.0.0 8000) >"$WORK/py.log" 2>&1 &
PIDS+=($!)
wait_for 10 ip netns exec "$A" curl -sf -o /dev/null -r 0-0 "http://10.9.0.2:8000/blob" || fail "http.server"
ip netns exec "$A" curl -sf -o /dev/null "http://10.9.0.2:8000/blob" & XFER=$!
sample ip netns exec "$B" ss -tin state established sport = :8000
linux=$(first_exit linux)

bg weir "$WEIR" serve --netns "$B" --tun we --addr 192.0.2.1/24 --peer 192.0.2.2/24 --app http "$WORK/www" \
  --control "$WORK/w.sock"
wait_for 10 test -S "$WORK/w.sock" || fail "weir serve"
ip netns exec "$A" curl -sf -o /dev/null "http://192.0.2.1/blob" & XFER=$!
sample "$WEIR" ss --control "$WORK/w.sock"
weir=$(first_exit weir)
kill -INT "$EMU"; wait "$EMU"
timing=$(python3 -c "
import json; j = json.load(open('$WORK/emu.json'))
print('%.1f%% / %.1f%%' % (100*j['a_to_b']['timing']['within_50us'], 100*j['b_to_a']['timing']['within_50us']))")
echo "| sender | cwnd at the first ssthresh sample | ssthresh |"
echo "| --- | --- | --- |"
echo "| Linux CUBIC (ss -ti) | ${linux% *} | ${linux#* } |"
echo "| weir CUBIC (weir ss) | ${weir% *} | ${weir#* } |"
echo
echo "emu departures within 50 us (a->b / b->a): $timing"

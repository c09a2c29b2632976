#!/usr/bin/env bash
# Goodput of weir against Linux's TCP on real (virtual) wires:
#   weir->Linux : curl in a namespace downloads from `weir serve --app http`
#   Linux->weir : `weir fetch` downloads from python3 -m http.server
#   Linux->Linux: curl downloads from python3 -m http.server
# over two paths:
#   direct: the Linux peer is the kernel side of weir's TUN device (weir) or
#           the other end of a veth pair (Linux->Linux)
#   emu:    through `weir emu` at RATE with DELAY one way (default 1 Gbit/s,
#           10 ms); weir sits behind a forwarding hop in namespace B
# Prints a Markdown table (for docs/performance.md). Needs root.
# Usage: bench/interop.sh [BUILD_DIR]   env: MB (100), RATE, DELAY, RUNS (1),
#        PATHS ("direct emu"; "direct" alone skips the emulator), WEIR (a
#        weir binary to use instead of BUILD_DIR's)
# BUILD_DIR (default build/bench-interop under the repository, from any
# working directory) is configured and weir_cli built there first when it
# has no weir binary yet, so the script runs from a clean checkout.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build/bench-interop}
WEIR=${WEIR:-$BUILD/tools/weir/weir}
if [ ! -x "$WEIR" ]; then
  echo "no weir binary at $WEIR: building weir_cli in $BUILD (RelWithDebInfo)" >&2
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_BUILD_BENCH=OFF >/dev/null \
    && cmake --build "$BUILD" --target weir_cli -j 2 >/dev/null || { echo "building weir failed" >&2; exit 1; }
fi
WEIR=$(readlink -f "$WEIR")
for t in curl python3 ip; do command -v $t >/dev/null || { echo "needs $t" >&2; exit 1; }; done
MB=${MB:-100} RATE=${RATE:-1Gbit} DELAY=${DELAY:-10ms} RUNS=${RUNS:-1} PATHS=${PATHS:-direct emu}
. "$ROOT/tests/interop/lib.sh"
interop_init bench
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$WORK/www" && make_file "$WORK/www/blob" "$MB"
WANT=$(sha "$WORK/www/blob")

# goodput_curl NS URL -> Mbit/s (0 on failure or wrong bytes)
goodput_curl() {
  local bps
  bps=$(timeout 300 ip netns exec "$1" curl -sf -o "$WORK/got" -w '%{speed_download}' "$2") || { echo 0; return; }
  [ "$(sha "$WORK/got")" = "$WANT" ] || { echo 0; return; }
  python3 -c "print(round($bps * 8 / 1e6, 1))"
}
# goodput_fetch NS TUN ADDR URL -> Mbit/s
goodput_fetch() {
  local t0 t1
  t0=$(date +%s.%N)
  timeout 300 "$WEIR" fetch -q --netns "$1" --tun "$2" --addr "$3" --sha256 "$WANT" "$4" >/dev/null 2>"$WORK/fetch.err" \
    || { sed 's/^/  weir fetch: /' "$WORK/fetch.err" >&2; echo 0; return; }
  t1=$(date +%s.%N)
  python3 -c "print(round($MB * 1048576 * 8 / ($t1 - $t0) / 1e6, 1))"
}
best() {  # best of RUNS
  local b=0 v
  for _ in $(seq "$RUNS"); do v=$("$@"); b=$(python3 -c "print(max($b, $v))"); done
  echo "$b"
}
pyserver() {  # pyserver NS PORT
  (cd "$WORK/www" && exec ip netns exec "$1" python3 -m http.server -b :: "$2") >"$WORK/py-$1.log" 2>&1 &
  PIDS+=($!)
  wait_for 10 ip netns exec "$1" curl -sf -o /dev/null "http://127.0.0.1:$2/" || fail "http.server in $1"
}

# --- direct ---------------------------------------------------------------
D=$(ns_add d); V=$(ns_add v)
ip link add "${P}va" type veth peer name "${P}vb"
ip link set "${P}va" netns "$D"; ip link set "${P}vb" netns "$V"
ip -n "$D" addr add 198.51.100.1/24 dev "${P}va"; ip -n "$D" link set "${P}va" up
ip -n "$V" addr add 198.51.100.2/24 dev "${P}vb"; ip -n "$V" link set "${P}vb" up
pyserver "$V" 8000
ll_direct=$(best goodput_curl "$D" "http://198.51.100.2:8000/blob")
bg weird "$WEIR" serve --netns "$D" --tun wd --addr 192.0.2.1/24 --peer 192.0.2.2/24 --app http "$WORK/www" \
  --control "$WORK/d.sock"
wait_for 10 test -S "$WORK/d.sock" || fail "weir serve (direct)"
wl_direct=$(best goodput_curl "$D" "http://192.0.2.1/blob")
kill -TERM "$LAST_PID"; wait "$LAST_PID"
pyserver "$D" 8001
ip -n "$D" tuntap add dev wf mode tun; ip -n "$D" addr add 192.0.2.2/24 dev wf; ip -n "$D" link set wf up
lw_direct=$(best goodput_fetch "$D" wf 192.0.2.1/24 "http://192.0.2.2:8001/blob")

ratio() { python3 -c "print('%.2f' % ($1 / $2) if $2 > 0 else 'n/a')"; }
# What the figures were measured on: Linux's sender uses the namespace's
# default algorithm (inherited from the host), weir CUBIC.
footer() {
  echo
  echo "goodput in Mbit/s (best of $RUNS), sha256 checked; load average $LOAD0 at the start," \
    "$(cut -d' ' -f1-3 /proc/loadavg) at the end; $(nproc) CPUs; weir $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)" \
    "($WEIR); Linux sender's congestion control: $(ip netns exec "$D" sysctl -n net.ipv4.tcp_congestion_control)"
}
if [ "$PATHS" = direct ]; then
  echo "| path | Linux->Linux | weir->Linux | Linux->weir | weir->Linux / Linux | Linux->weir / Linux |"
  echo "| --- | --- | --- | --- | --- | --- |"
  echo "| direct (veth / TUN), $MB MB | $ll_direct | $wl_direct | $lw_direct | $(ratio "$wl_direct" "$ll_direct") | $(ratio "$lw_direct" "$ll_direct") |"
  footer
  exit 0
fi

# --- through weir emu -------------------------------------------------------
A=$(ns_add a); B=$(ns_add b)
tun_add "$A" ta 10.9.0.1/24; tun_add "$B" tb 10.9.0.2/24
ip -n "$A" route add 192.0.2.0/24 via 10.9.0.2 dev ta
ip netns exec "$B" sysctl -qw net.ipv4.ip_forward=1
link_toml "$WORK/link.toml" "rate = \"$RATE\"" "delay = \"$DELAY\"" "queue = 10000"
bg emu "$WEIR" emu --a "$A:ta" --b "$B:tb" --link "$WORK/link.toml" --json "$WORK/emu.json" --rt-prio 10
EMU=$LAST_PID
pyserver "$B" 8002
ll_emu=$(best goodput_curl "$A" "http://10.9.0.2:8002/blob")
bg weire "$WEIR" serve --netns "$B" --tun we --addr 192.0.2.1/24 --peer 192.0.2.2/24 --app http "$WORK/www" \
  --control "$WORK/e.sock"
WE=$LAST_PID
wait_for 10 test -S "$WORK/e.sock" || fail "weir serve (emu)"
wl_emu=$(best goodput_curl "$A" "http://192.0.2.1/blob")
kill -TERM "$WE"; wait "$WE"
# weir as the client: its TUN in A, the route to B's server through emu.
# (A subnet of its own: A already routes 192.0.2.0/24 towards B.)
ip -n "$A" tuntap add dev wc mode tun; ip -n "$A" addr add 203.0.113.2/24 dev wc; ip -n "$A" link set wc up
ip netns exec "$A" sysctl -qw net.ipv4.ip_forward=1
ip -n "$B" route add 203.0.113.0/24 via 10.9.0.1 dev tb
lw_emu=$(best goodput_fetch "$A" wc 203.0.113.1/24 "http://10.9.0.2:8002/blob")
kill -INT "$EMU"; wait "$EMU"
timing=$(python3 -c "
import json; j = json.load(open('$WORK/emu.json'))
print('%.1f%% / %.1f%%' % (100*j['a_to_b']['timing']['within_50us'], 100*j['b_to_a']['timing']['within_50us']))")

echo "| path | Linux->Linux | weir->Linux | Linux->weir | weir->Linux / Linux | Linux->weir / Linux |"
echo "| --- | --- | --- | --- | --- | --- |"
echo "| direct (veth / TUN), $MB MB | $ll_direct | $wl_direct | $lw_direct | $(ratio "$wl_direct" "$ll_direct") | $(ratio "$lw_direct" "$ll_direct") |"
echo "| weir emu $RATE $DELAY, $MB MB | $ll_emu | $wl_emu | $lw_emu | $(ratio "$wl_emu" "$ll_emu") | $(ratio "$lw_emu" "$ll_emu") |"
footer
echo "emu departures within 50 us of schedule (a->b / b->a): $timing"

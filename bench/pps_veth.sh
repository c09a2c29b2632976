#!/usr/bin/env bash
# Packets per second with real 1500-byte packets over veth, the anchor's own
# setting ("veth with real 1500-byte packets: 0.84 M packets/s"), with weir
# on the veth itself through its AF_PACKET rings (`--packet`,
# link/packet_ring.h) instead of a TUN (bench/pps.sh):
#   Linux->Linux: iperf3 (CUBIC) over a veth pair, TSO and GSO off on the
#                 sender (ethtool -K: one MTU-sized packet per skb), GRO off
#                 on the receiver (veth's default)
#   weir->Linux : `weir serve --app chargen --packet` on one end of a second
#                 veth pair (weir turns TSO/GSO/GRO off on its end), a
#                 python reader (1 MB recv_into) on the other end
#   Linux->weir : a python writer (1 MB sendall) to `weir serve --app discard --packet`
#   weir->weir  : (WW=1, the default) `weir serve --app chargen --packet` on
#                 one end of a third veth pair, `weir fetch tcp://... --no-sha256`
#                 on the other (copy TX with GSO super-packets; the
#                 receiver's RX path WWRX, default copy); no kernel TCP on either end, so
#                 the receiving stack runs in its own process, not in the
#                 sender's softirq as Linux's does over veth
# Both pairs alike: MTU 1500, Linux's end with TSO and GSO off. Each bulk
# transfer runs WARM seconds, then the Linux end's device counter is read
# over SECS seconds; ROUNDS rounds alternate Linux->Linux and weir's two
# directions (in alternating order) once per AF_PACKET RX ring in RINGS
# (default "v3 v2", `--ring-rx`, link/packet_ring.h), so the rings are
# compared in the same minutes; each weir figure is followed by its ratio
# to that round's Linux->Linux; likewise once per TX path in TXS (default
# "copy", `--packet-tx`: the TPACKET_V3 ring or copy, sendmmsg, with GSO
# super-packets; copy-plain: copy with --no-offload, one frame per message). PERF=1 records `perf stat` of weir over the counted
# seconds of each weir run and of the Linux->Linux sender (and a row of
# packets per CPU-second of the sending process, iperf3's or weir's, with
# weir's ratio to Linux's), PERF=record a
# `perf record -g` profile of each (its top entries printed at the end). Needs root.
# Usage: bench/pps_veth.sh [BUILD_DIR]   env: SECS (5), WARM (1), ROUNDS (3), PERF (0), PIN (0), RINGS ("v3 v2"; "" for none), TXS ("copy"), WW (1), WWRX ("v2 copy")
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build/default}
WEIR=${WEIR:-$BUILD/tools/weir/weir}
[ -x "$WEIR" ] || { echo "no weir binary at $WEIR (build weir_cli first)" >&2; exit 1; }
WEIR=$(readlink -f "$WEIR")
for t in nc ip iperf3 ethtool python3; do command -v $t >/dev/null || { echo "needs $t" >&2; exit 1; }; done
SECS=${SECS:-5} WARM=${WARM:-1} ROUNDS=${ROUNDS:-3} PERF=${PERF:-0} PIN=${PIN:-0} RINGS=${RINGS-v3 v2} TXS=${TXS:-copy} WW=${WW:-1} WWRX=${WWRX:-v2 copy}
eval "XARGS=(${WEIR_ARGS:-})"  # shell words: quotes allowed
. "$ROOT/tests/interop/lib.sh"
interop_init pps-veth
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

counter() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3_packets"; }
# rate NS DEV DIR [PID TAG]: packets/s over SECS after WARM; with PERF=1 and
# a PID, `perf stat` of that process over the same SECS.
rate() {
  sleep "$WARM"
  local a b
  a=$(counter "$1" "$2" "$3")
  if [ "$PERF" = record ] && [ "${4:--}" != - ]; then
    perf record -q -g -p "$4" -o "$WORK/perf-$5.data" -- sleep "$SECS" >/dev/null 2>&1
    perf report -i "$WORK/perf-$5.data" --no-children --percent-limit ${PERF_LIMIT:-1.5} --stdio 2>/dev/null \
      | grep -E '^ +[0-9.]+%' >"$WORK/perf-$5.txt"
    # where the samples fall: the kernel against weir's own code and libc
    perf report -i "$WORK/perf-$5.data" --no-children --sort dso --stdio 2>/dev/null \
      | grep -E '^ +[0-9.]+%' | head -4 | sed 's/^/  by object: /' >>"$WORK/perf-$5.txt"
  elif [ "$PERF" = 1 ] && [ "${4:--}" != - ]; then
    perf stat -p "$4" -o "$WORK/perf-$5.txt" -- sleep "$SECS" 2>/dev/null
  else
    sleep "$SECS"
  fi
  b=$(counter "$1" "$2" "$3")
  # With PERF=1: the packets per CPU-second of the process, which a shared
  # machine's load moves far less than packets per second.
  if [ "$PERF" = 1 ] && [ -f "$WORK/perf-$5.txt" ]; then
    awk -v n=$((b - a)) '/task-clock/ { gsub(",", "", $1); if ($1 > 0) printf "%d\n", n / ($1 / 1000) }' \
      "$WORK/perf-$5.txt" >"$WORK/cpu-$5"
  fi
  echo $(((b - a) / SECS))
}
per_cpu() { cat "$WORK/cpu-$1" 2>/dev/null || echo 0; }
# pin tx|rx: with PIN=1, the sending process on CPU 0 and the receiving
# one on CPU 1, for every pair alike. Unpinned, the scheduler's placement
# (and where the receiver's softirq work lands) gave two regimes about 2x
# apart from one run to the next, for Linux and weir alike.
pin() { [ "$PIN" = 1 ] && echo "taskset -c $([ "$1" = tx ] && echo 0 || echo 1)"; }
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
rate_then_stop() {  # NS DEV DIR PERF_PID PERF_TAG PID...
  local ns=$1 dev=$2 dir=$3 pp=$4 tag=$5 p; shift 5
  rate "$ns" "$dev" "$dir" "$pp" "$tag"
  for p in "$@"; do stop "$p"; done
}
# veth_pair NS_A DEV_A NS_B DEV_B: MTU 1500, up, TSO/GSO off on both ends.
veth_pair() {
  ip link add "$2" type veth peer name "$4" || exit 1
  ip link set "$2" netns "$1"; ip link set "$4" netns "$3"
  ip -n "$1" link set "$2" mtu 1500 up; ip -n "$3" link set "$4" mtu 1500 up
  ip netns exec "$1" ethtool -K "$2" tso off gso off >/dev/null
  ip netns exec "$3" ethtool -K "$4" tso off gso off >/dev/null
}

D=$(ns_add d); V=$(ns_add v); X=$(ns_add x)
veth_pair "$D" "${P}va" "$V" "${P}vb"  # Linux <-> Linux
ip -n "$D" addr add 198.51.100.1/24 dev "${P}va"; ip -n "$V" addr add 198.51.100.2/24 dev "${P}vb"
veth_pair "$D" "${P}xa" "$X" "${P}xb"  # Linux (D) <-> weir (X, no kernel addresses)
ip -n "$D" addr add 198.18.0.2/24 dev "${P}xa"
Y=$(ns_add y)
veth_pair "$Y" "${P}ya" "$Y" "${P}yb"  # weir <-> weir (no kernel addresses)

linux_linux() {
  bg llsink $(pin rx) ip netns exec "$V" iperf3 -s -1 -B 198.51.100.2
  local sink=$LAST_PID
  wait_for 5 ip netns exec "$V" sh -c "ss -ltn 'sport = :5201' | grep -q LISTEN"
  bg llsrc $(pin tx) ip netns exec "$D" iperf3 -c 198.51.100.2 -C cubic -t $((WARM + SECS + 2))
  rate_then_stop "$D" "${P}va" tx "$LAST_PID" "$r-linux-sender" "$LAST_PID" "$sink"
}
# weir_app APP PORT UNUSED DIR PYTHON: weir serves APP on its veth end, the
# python client talks to it from Linux's end, whose DIR counter is rated.
weir_app() {
  local txargs=(--packet-tx "${tx%-plain}")
  [ "$tx" = "${tx%-plain}" ] || txargs+=(--no-offload)
  local side=rx; [ "$4" = rx ] && side=tx  # weir sends when Linux's end receives
  bg "w$1-$ring-$tx" $(pin $side) "$WEIR" serve --netns "$X" --packet "${P}xb" --ring-rx "$ring" "${txargs[@]}" --addr 198.18.0.1/24 --app "$1" \
    --no-control "${XARGS[@]}"
  local srv=$LAST_PID
  wait_for 10 ip netns exec "$D" nc -z -w 1 198.18.0.1 "$2"
  bg "n$1" $(pin $([ $side = tx ] && echo rx || echo tx)) ip netns exec "$D" python3 -c "$5" 198.18.0.1 "$2"
  rate_then_stop "$D" "${P}xa" "$4" "$srv" "$r-$ring-$tx-$1" "$LAST_PID" "$srv"
}
# Linux's end of weir's transfers: python with 1 MB socket calls, not nc
# (16 KB per call: on this loaded 2-core VM nc itself was the limit, its
# socket app-limited in `ss -ti`), as iperf3 uses 128 KB writes.
PYSEND='import socket,sys; s=socket.create_connection((sys.argv[1],int(sys.argv[2]))); b=bytes(1<<20)
while True: s.sendall(b)'
PYRECV='import socket,sys; s=socket.create_connection((sys.argv[1],int(sys.argv[2]))); b=bytearray(1<<20)
while s.recv_into(b): pass'
weir_linux() { weir_app chargen 19 "" rx "$PYRECV"; }
# weir_weir: chargen from one weir to the other's raw fetch; the receiving
# end's counter is rated, as Linux's end is for weir->Linux.
weir_weir() {  # RX: the receiving weir's --ring-rx
  local rx=$1
  bg ww-serve $(pin tx) "$WEIR" serve --netns "$Y" --packet "${P}ya" --addr 198.18.1.1/24 --app chargen --no-control "${XARGS[@]}"
  local srv=$LAST_PID
  sleep 1  # no kernel address to probe the server with: give it its start-up
  bg ww-fetch $(pin rx) "$WEIR" fetch --netns "$Y" --packet "${P}yb" --ring-rx "$rx" --addr 198.18.1.2/24 --no-sha256 -q \
    --timeout $((WARM + SECS + 10)) tcp://198.18.1.1:19 "${XARGS[@]}"
  rate_then_stop "$Y" "${P}yb" rx "$srv" "$r-weir-weir-$rx" "$LAST_PID" "$srv"
}
linux_weir() { weir_app discard 9 "" tx "$PYSEND"; }
ratio() { python3 -c "print('%.2f' % ($1 / $2) if $2 > 0 else 'n/a')"; }

head="| round | Linux->Linux veth |" sep="| --- | --- |"
if [ "$WW" = 1 ]; then for rx in $WWRX; do head+=" weir->weir rx $rx |"; sep+=" --- |"; done; fi
for ring in $RINGS; do for tx in $TXS; do
  head+=" weir->Linux $ring $tx | Linux->weir $ring $tx |"; sep+=" --- | --- |"
done; done
echo "$head"; echo "$sep"
for r in $(seq "$ROUNDS"); do
  ll=$(linux_linux)
  row="| $r | $ll |"
  if [ "$WW" = 1 ]; then for rx in $WWRX; do ww=$(weir_weir "$rx"); row+=" $ww ($(ratio "$ww" "$ll")) |"; done; fi
  for ring in $RINGS; do for tx in $TXS; do
    if [ $((r % 2)) = 1 ]; then wl=$(weir_linux); lw=$(linux_weir); else lw=$(linux_weir); wl=$(weir_linux); fi
    row+=" $wl ($(ratio "$wl" "$ll")) | $lw ($(ratio "$lw" "$ll")) |"
  done; done
  echo "$row"
  if [ "$PERF" = 1 ]; then
    lc=$(per_cpu "$r-linux-sender") row="| $r, per CPU-second of the sender | $lc |"
    if [ "$WW" = 1 ]; then for rx in $WWRX; do wc=$(per_cpu "$r-weir-weir-$rx"); row+=" $wc ($(ratio "$wc" "$lc")) |"; done; fi
    for ring in $RINGS; do for tx in $TXS; do
      wc=$(per_cpu "$r-$ring-$tx-chargen") row+=" $wc ($(ratio "$wc" "$lc")) | |"
    done; done
    echo "$row"
  fi
done
echo
echo "packets/s of 1500-byte packets over ${SECS} s after ${WARM} s; load average $LOAD0 at the start," \
  "$(cut -d' ' -f1-3 /proc/loadavg) at the end; $(nproc) CPUs; weir" \
  "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) ($WEIR)"
for f in "$WORK"/perf-*.txt; do
  [ -f "$f" ] && { echo "== $(basename "$f")"; grep -E '%|task-clock|context-switches|cycles|instructions|elapsed' "$f"; }
done
for ring in $RINGS; do for tx in $TXS; do grep -h 'AF_PACKET' "$WORK"/w*-"$ring-$tx".log 2>/dev/null | tail -2; done; done

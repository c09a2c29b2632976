#!/usr/bin/env bash
# Packets per second with real 1500-byte packets, the unit of the veth
# anchor ("veth with real 1500-byte packets: 0.84 M packets/s"):
#   Linux->Linux: iperf3 (CUBIC) over a veth pair with TSO and GSO off
#                 (ethtool -K: every skb leaves as one MTU-sized packet;
#                 the receiver's GRO stays off, veth's default)
#   weir->Linux : `weir serve --app chargen --no-offload` (plain TUN, no
#                 TSO super-packets) to nc on the kernel side of the TUN
#   Linux->weir : nc from /dev/zero to `weir serve --app discard --no-offload`
#   the same two with --io-uring (link/tun_uring.h: reads kept posted,
#   writes queued, one io_uring_enter per burst); URING=0 leaves them out
# Each bulk transfer runs WARM seconds, then its device counter is read over
# SECS seconds; ROUNDS rounds alternate the five, and the table gives each
# round's figures and weir's ratios to Linux->Linux in the same round. Needs
# root. Usage: bench/pps.sh [BUILD_DIR]   env: SECS (5), WARM (1), ROUNDS (3), URING (1)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build/default}
WEIR=${WEIR:-$BUILD/tools/weir/weir}
[ -x "$WEIR" ] || { echo "no weir binary at $WEIR (build weir_cli first)" >&2; exit 1; }
WEIR=$(readlink -f "$WEIR")
for t in nc ip iperf3 ethtool python3; do command -v $t >/dev/null || { echo "needs $t" >&2; exit 1; }; done
SECS=${SECS:-5} WARM=${WARM:-1} ROUNDS=${ROUNDS:-3} URING=${URING:-1}
. "$ROOT/tests/interop/lib.sh"
interop_init pps
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

# counter NS DEV rx|tx -> packets so far
counter() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3_packets"; }
# rate NS DEV DIR -> packets/s over SECS, after WARM seconds of the running transfer
rate() {
  sleep "$WARM"
  local a b
  a=$(counter "$1" "$2" "$3"); sleep "$SECS"; b=$(counter "$1" "$2" "$3")
  echo $(((b - a) / SECS))
}
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

D=$(ns_add d); V=$(ns_add v)
ip link add "${P}va" type veth peer name "${P}vb"
ip link set "${P}va" netns "$D"; ip link set "${P}vb" netns "$V"
ip -n "$D" addr add 198.51.100.1/24 dev "${P}va"; ip -n "$V" addr add 198.51.100.2/24 dev "${P}vb"
ip -n "$D" link set "${P}va" mtu 1500 up; ip -n "$V" link set "${P}vb" mtu 1500 up
ip netns exec "$D" ethtool -K "${P}va" tso off gso off >/dev/null

# rate_then_stop NS DEV DIR PID...: the rate, then the transfer's processes end
rate_then_stop() {
  local ns=$1 dev=$2 dir=$3 p; shift 3
  rate "$ns" "$dev" "$dir"
  for p in "$@"; do stop "$p"; done
}
linux_linux() {
  bg llsink ip netns exec "$V" iperf3 -s -1 -B 198.51.100.2
  local sink=$LAST_PID
  wait_for 5 ip netns exec "$V" sh -c "ss -ltn 'sport = :5201' | grep -q LISTEN"
  bg llsrc ip netns exec "$D" iperf3 -c 198.51.100.2 -C cubic -t $((WARM + SECS + 2))
  rate_then_stop "$D" "${P}va" tx "$LAST_PID" "$sink"
}
# weir_app APP PORT CLIENT_SHELL_REDIRECT DIR [WEIR_OPTION...]: weir serves
# APP on a plain TUN, nc talks to it from the kernel side, the TUN's DIR
# counter is rated.
weir_app() {
  bg "w$1" "$WEIR" serve --netns "$D" --tun "${P}w" --addr 192.0.2.1/24 --peer 192.0.2.2/24 \
    --app "$1" --no-offload --no-control "${@:5}"
  local srv=$LAST_PID
  wait_for 10 ip netns exec "$D" nc -z -w 1 192.0.2.1 "$2"
  bg "n$1" ip netns exec "$D" sh -c "nc 192.0.2.1 $2 $3"
  rate_then_stop "$D" "${P}w" "$4" "$LAST_PID" "$srv"
}
weir_linux() { weir_app chargen 19 "> /dev/null" rx "$@"; }
linux_weir() { weir_app discard 9 "< /dev/zero" tx "$@"; }
ratio() { python3 -c "print('%.2f' % ($1 / $2) if $2 > 0 else 'n/a')"; }

if [ "$URING" = 1 ]; then
  echo "| round | Linux->Linux veth | weir->Linux TUN | Linux->weir TUN | weir->Linux io_uring | Linux->weir io_uring" \
    "| weir->Linux / Linux | Linux->weir / Linux | weir->Linux io_uring / Linux | Linux->weir io_uring / Linux |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
else
  echo "| round | Linux->Linux veth | weir->Linux TUN | Linux->weir TUN | weir->Linux / Linux | Linux->weir / Linux |"
  echo "| --- | --- | --- | --- | --- | --- |"
fi
for r in $(seq "$ROUNDS"); do
  ll=$(linux_linux); wl=$(weir_linux); lw=$(linux_weir)
  if [ "$URING" = 1 ]; then
    # Alternate which weir configuration goes first, so neither always
    # follows the same neighbour.
    if [ $((r % 2)) = 0 ]; then
      ul=$(weir_linux --io-uring); uw=$(linux_weir --io-uring)
    else
      uw=$(linux_weir --io-uring); ul=$(weir_linux --io-uring)
    fi
    echo "| $r | $ll | $wl | $lw | $ul | $uw | $(ratio "$wl" "$ll") | $(ratio "$lw" "$ll") |" \
      "$(ratio "$ul" "$ll") | $(ratio "$uw" "$ll") |"
  else
    echo "| $r | $ll | $wl | $lw | $(ratio "$wl" "$ll") | $(ratio "$lw" "$ll") |"
  fi
done
echo
echo "packets/s of 1500-byte packets over ${SECS} s after ${WARM} s; load average $LOAD0 at the start," \
  "$(cut -d' ' -f1-3 /proc/loadavg) at the end; $(nproc) CPUs; weir" \
  "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) ($WEIR)"

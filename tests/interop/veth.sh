#!/usr/bin/env bash
# weir on an Ethernet link against the Linux kernel's own TCP: two private
# namespaces joined by a veth pair, weir on one end through its AF_PACKET
# rings (`--packet`, link/packet_ring.h) and its own ARP/ND (EtherLink),
# Linux on the other end; or (DEV=tap) weir on a TAP device whose kernel
# side is Linux.
#   veth.sh http   curl downloads a file from `weir serve --app http`
#   veth.sh fetch  `weir fetch` downloads from python3 -m http.server
#   veth.sh unreach  `weir fetch` from an absent on-link host fails with
#                  EHOSTUNREACH (failed ARP/ND, ICMP errors to the own stack)
#   veth.sh dad    Linux holds weir's IPv6 address: weir's DAD refuses it
#                  (exit 1), and Linux sees weir's MLD report and probe
#   veth.sh raw    `weir fetch tcp://` reads a raw stream from `nc -l -N`
#                  (no HTTP), sha256 checked; `--no-sha256` prints no digest
#   veth.sh weirs  weir on both ends of a veth (ARP/ND between two weirs):
#                  `weir fetch` from `weir serve --app http`
#   veth.sh peer   both ends of the veth in one namespace, `--peer` giving
#                  Linux's end its addresses: nc echo, `weir ss --dev`;
#                  once per RX ring in RINGS (default "v2 v3")
# Each over IPv4 and IPv6 (FAMILIES, default "4 6"), the bytes checked by
# sha256; then Linux's neighbour table must hold weir's MAC for weir's
# addresses (http: the --mac given; fetch: the default, derived from the
# interface's MAC, ether_setup.h). MB sets the size (default 10); XT the
# time limit of one transfer in seconds. RING (v2, v3 or copy; default:
# weir's own, v2) picks the AF_PACKET RX path of http, fetch, raw and
# weirs (--ring-rx), and http's device counters must name it. TX (ring or copy; default: weir's own)
# picks how http and fetch send (--packet-tx), and the counters must name
# that too, with frames sent.
set -u
. "$(dirname "$0")/lib.sh"
MODE=$1 DEV=${DEV:-packet}
interop_init "veth-$MODE-$DEV"
MB=${MB:-10}
XT=${XT:-$((10 + MB / 4))}
FAMILIES=${FAMILIES:-4 6}
W4=198.18.0.1 K4=198.18.0.2 W6=fd00:78::1 K6=fd00:78::2
MAC=02:00:5e:00:53:01  # RFC 7042 documentation range, locally administered
CTL="$WORK/ctl.sock"
mkdir -p "$WORK/www"
make_file "$WORK/www/blob" "$MB"
WANT=$(sha "$WORK/www/blob")

K=$(ns_add k)
if [ "$DEV" = packet ]; then
  W=$(ns_add w)
  ip link add "${P}w" type veth peer name "${P}k" || fail "ip link add veth"
  ip link set "${P}w" netns "$W"
  ip link set "${P}k" netns "$K"
  # Linux's end sends real 1500-byte frames (weir's end: weir sets it up).
  ip netns exec "$K" ethtool -K "${P}k" tso off gso off >/dev/null 2>&1
  ip -n "$K" addr add $K4/24 dev "${P}k"
  ip -n "$K" -6 addr add $K6/64 dev "${P}k" nodad
  ip -n "$K" link set "${P}k" up
  DEVARGS=(--netns "$W" --packet "${P}w" ${RING:+--ring-rx "$RING"} ${TX:+--packet-tx "$TX"})
  WDEV="${P}w" WNS=$W KDEV="${P}k"
else
  # TAP: weir creates it in K and gives its kernel side (Linux) the addresses.
  DEVARGS=(--netns "$K" --tap "${P}t" --peer $K4/24 --peer $K6/64)
  WDEV="${P}t" WNS=$K KDEV="${P}t"
fi
ADDRS=(--addr $W4/24 --addr $W6/64)

# The MAC Linux must have learnt for weir's address WADDR.
neigh_has() {  # WADDR MAC
  ip -n "$K" neigh show "$1" dev "$KDEV" | grep -qi "lladdr $2" \
    || { ip -n "$K" neigh show; fail "Linux's neighbour table lacks $1 -> $2"; }
  echo "ok: ip neigh: $1 lladdr $2"
}

# ether_setup.h derived_mac: the interface's MAC, first octet ((o ^ 4) | 2) & 0xfe.
derived_mac() {
  local m o
  m=$(ip -n "$WNS" link show "$WDEV" | awk '/link\/ether/ {print $2}')
  o=$((0x${m%%:*}))
  printf '%02x:%s' $((((o ^ 4) | 2) & 0xfe)) "${m#*:}"
}

url_host() { [ "$1" = 4 ] && echo "$2" || echo "[$3]"; }

case $MODE in
http)
  bg weir "$WEIR" serve "${DEVARGS[@]}" "${ADDRS[@]}" --mac $MAC --control "$CTL" --app http "$WORK/www" --port 8080
  WEIR_PID=$LAST_PID
  wait_for 10 test -S "$CTL" || fail "weir serve did not start"
  for f in $FAMILIES; do
    url="http://$(url_host "$f" $W4 $W6):8080/blob"
    rm -f "$WORK/got"
    timeout "$XT" ip netns exec "$K" curl -sSf --max-time "$XT" -o "$WORK/got" "$url" || fail "curl $url"
    [ "$(sha "$WORK/got")" = "$WANT" ] || fail "sha256 mismatch: $url"
    echo "ok: curl $url ($MB MB over $DEV)"
  done
  for f in $FAMILIES; do neigh_has "$([ "$f" = 4 ] && echo $W4 || echo $W6)" $MAC; done
  kill -TERM "$WEIR_PID"
  wait "$WEIR_PID" || fail "weir serve exited with $?"
  grep -Eq "rx [1-9][0-9]* frames" "$WORK/weir.log" || { cat "$WORK/weir.log"; fail "no device counters on exit"; }
  if [ "$DEV" = packet ]; then
    want=TPACKET_$(echo "${RING:-v2}" | tr v V)
    [ "${RING:-}" = copy ] && want=copying
    grep -q "AF_PACKET $want rx" "$WORK/weir.log" || { cat "$WORK/weir.log"; fail "not the $want RX path"; }
    echo "ok: RX $want"
    txname=copying
    [ "${TX:-}" = ring ] && txname=TPACKET_V3
    grep -Eq "$txname tx [1-9]" "$WORK/weir.log" || { cat "$WORK/weir.log"; fail "not the $txname TX path"; }
    echo "ok: TX $txname"
  fi ;;
fetch)
  (cd "$WORK/www" && exec ip netns exec "$K" python3 -m http.server -b :: 8081) >"$WORK/http.log" 2>&1 &
  PIDS+=($!)
  if [ "$DEV" = tap ]; then
    # The TAP (and so Linux's addresses on it) exists only while weir runs:
    # wait for the server on loopback instead.
    wait_for 10 ip netns exec "$K" curl -sf -o /dev/null "http://127.0.0.1:8081/blob" -r 0-0
  else
    wait_for 10 ip netns exec "$K" curl -sf -o /dev/null "http://$K4:8081/blob" -r 0-0
  fi || fail "HTTP server did not start"
  for f in $FAMILIES; do
    url="http://$(url_host "$f" $K4 $K6):8081/blob"
    rm -f "$WORK/got"
    timeout "$XT" "$WEIR" fetch "${DEVARGS[@]}" "${ADDRS[@]}" -o "$WORK/got" --sha256 "$WANT" \
      --timeout $((XT - 1)) "$url" >"$WORK/fetch.log" 2>&1 || { cat "$WORK/fetch.log"; fail "weir fetch $url"; }
    [ "$(sha "$WORK/got")" = "$WANT" ] || fail "sha256 mismatch: $url"
    grep -q "^$WANT" "$WORK/fetch.log" || fail "weir fetch did not print the sha256"
    echo "ok: weir fetch $url ($MB MB over $DEV)"
    # The TAP goes with weir; a veth keeps Linux's entry for weir's address.
    [ "$DEV" = packet ] && neigh_has "$([ "$f" = 4 ] && echo $W4 || echo $W6)" "$(derived_mac)"
  done ;;
raw)
  command -v nc >/dev/null || interop_skip "no nc (netcat-openbsd)"
  [ "$DEV" = packet ] || interop_skip "raw: --packet only"
  # nc_send FAMILY PORT: nc sends the file once, then half-closes (-N):
  # the FIN ends weir's body.
  nc_send() {
    (exec ip netns exec "$K" nc -"$1" -N -l "$2" <"$WORK/www/blob") >"$WORK/nc-$2.log" 2>&1 &
    PIDS+=($!)
    wait_for 10 ip netns exec "$K" sh -c "ss -ltn 'sport = :$2' | grep -q LISTEN" || fail "nc -l $2 did not start"
  }
  port=9000
  for f in $FAMILIES; do
    port=$((port + 1))
    nc_send "$f" "$port"
    url="tcp://$(url_host "$f" $K4 $K6):$port"
    timeout "$XT" "$WEIR" fetch "${DEVARGS[@]}" "${ADDRS[@]}" --sha256 "$WANT" --timeout $((XT - 1)) "$url" \
      >"$WORK/fetch.log" 2>&1 || { cat "$WORK/fetch.log"; fail "weir fetch $url"; }
    grep -q "^$WANT" "$WORK/fetch.log" || { cat "$WORK/fetch.log"; fail "weir fetch did not print the sha256"; }
    echo "ok: weir fetch $url ($MB MB raw over $DEV, sha256 matches)"
  done
  # Counting only: the byte count, and no digest line.
  nc_send 4 9100
  timeout "$XT" "$WEIR" fetch "${DEVARGS[@]}" "${ADDRS[@]}" --no-sha256 --timeout $((XT - 1)) "tcp://$K4:9100" \
    >"$WORK/count.out" 2>"$WORK/count.err" || { cat "$WORK/count.err"; fail "weir fetch --no-sha256"; }
  bytes=$(stat -c %s "$WORK/www/blob")
  grep -q "weir fetch: $bytes bytes in" "$WORK/count.err" || { cat "$WORK/count.err"; fail "no byte count $bytes"; }
  [ ! -s "$WORK/count.out" ] || { cat "$WORK/count.out"; fail "--no-sha256 printed a digest"; }
  echo "ok: weir fetch --no-sha256 counted $bytes bytes and printed no digest"
  if "$WEIR" fetch --no-sha256 --sha256 "$WANT" --addr $W4/24 --packet "${P}w" "tcp://$K4:1" >/dev/null 2>"$WORK/both.err"; then
    fail "--no-sha256 with --sha256 was accepted"
  fi
  grep -q "excludes" "$WORK/both.err" || { cat "$WORK/both.err"; fail "--no-sha256 with --sha256: not refused as exclusive"; }
  echo "ok: --no-sha256 excludes --sha256" ;;
weirs)
  [ "$DEV" = packet ] || interop_skip "weirs: --packet only"
  # A pair of its own, both ends weir's, no kernel addresses on either:
  # each weir resolves the other by its own ARP and neighbour discovery.
  Y=$(ns_add y)
  ip -n "$Y" link add "${P}ya" type veth peer name "${P}yb" || fail "ip link add veth"
  bg weir-serve "$WEIR" serve --netns "$Y" --packet "${P}ya" ${RING:+--ring-rx "$RING"} "${ADDRS[@]}" --control "$CTL" \
    --app http "$WORK/www" --port 8080
  SPID=$LAST_PID
  wait_for 10 test -S "$CTL" || fail "weir serve did not start"
  for f in $FAMILIES; do
    url="http://$(url_host "$f" $W4 $W6):8080/blob"
    timeout "$XT" "$WEIR" fetch --netns "$Y" --packet "${P}yb" ${RING:+--ring-rx "$RING"} --addr $K4/24 --addr $K6/64 --sha256 "$WANT" \
      --timeout $((XT - 1)) "$url" >"$WORK/fetch.log" 2>&1 || { cat "$WORK/fetch.log"; fail "weir fetch $url"; }
    grep -q "^$WANT" "$WORK/fetch.log" || { cat "$WORK/fetch.log"; fail "weir fetch did not print the sha256"; }
    echo "ok: weir fetch $url from weir serve ($MB MB, both ends weir)"
  done
  "$WEIR" ss --control "$CTL" --dev >"$WORK/dev.out" || fail "weir ss --dev"
  grep -q "^ether " "$WORK/dev.out" || { cat "$WORK/dev.out"; fail "no EtherLink counters"; }
  kill -TERM "$SPID"
  wait "$SPID" || fail "weir serve exited with $?" ;;
peer)
  command -v nc >/dev/null || interop_skip "no nc (netcat-openbsd)"
  head -c 100000 "$WORK/www/blob" >"$WORK/small"
  # weir's end and Linux's end in one namespace of their own (K already
  # holds the same addresses on the first pair); --peer configures Linux's.
  # A fresh namespace and pair per ring.
  for ring in ${RINGS:-v2 v3}; do
    K=$(ns_add "q$ring")
    ip -n "$K" link add "${P}a" type veth peer name "${P}b" || fail "ip link add veth"
    rm -f "$CTL"
    bg "weir-$ring" "$WEIR" serve --netns "$K" --packet "${P}a" --ring-rx "$ring" --peer $K4/24 --peer $K6/64 \
      "${ADDRS[@]}" --control "$CTL" --app echo --port 7007
    WPID=$LAST_PID
    wait_for 10 test -S "$CTL" || fail "weir serve did not start ($ring)"
    for host in $W4 $W6; do
      timeout 10 ip netns exec "$K" nc -N -w 5 "$host" 7007 <"$WORK/small" >"$WORK/back" || fail "nc $host ($ring)"
      cmp -s "$WORK/small" "$WORK/back" || fail "echo differs ($host, $ring)"
      echo "ok: nc echo via $host, Linux's end configured by --peer, RX ring $ring"
    done
    KDEV="${P}b"
    neigh_has $W4 "$(WNS=$K WDEV="${P}a" derived_mac)"
    "$WEIR" ss --control "$CTL" --dev >"$WORK/dev.out" || fail "weir ss --dev"
    want=$(echo "$ring" | tr v V)
    grep -Eq "AF_PACKET TPACKET_$want rx [1-9]" "$WORK/dev.out" || { cat "$WORK/dev.out"; fail "no $want ring counters"; }
    grep -q "^ether " "$WORK/dev.out" || { cat "$WORK/dev.out"; fail "no EtherLink counters"; }
    echo "ok: weir ss --dev ($want)"
    kill -TERM "$WPID"
    wait "$WPID" || fail "weir serve ($ring) exited with $?"
  done ;;
unreach)
  # Nobody holds .77 / ::77 on the link: weir's ARP or neighbour discovery
  # gives up after 3 solicitations, and the queued SYNs come back to weir's
  # stack as ICMP unreachables (EtherLink::take_local), so the connect()
  # fails with EHOSTUNREACH as Linux's does, not ETIMEDOUT after its SYN
  # retries (about 127 s).
  for f in $FAMILIES; do
    url="http://$(url_host "$f" 198.18.0.77 fd00:78::77):8081/blob"
    t0=$(date +%s%N)
    if timeout 30 "$WEIR" fetch "${DEVARGS[@]}" "${ADDRS[@]}" -o "$WORK/got" --timeout 25 "$url" \
        >"$WORK/fetch.log" 2>&1; then
      fail "weir fetch from an absent host succeeded: $url"
    fi
    grep -q "EHOSTUNREACH" "$WORK/fetch.log" || { cat "$WORK/fetch.log"; fail "not EHOSTUNREACH: $url"; }
    ms=$((($(date +%s%N) - t0) / 1000000))
    # Three solicitations a second apart, then failure: not before 3 s.
    [ "$ms" -ge 2900 ] || fail "EHOSTUNREACH after $ms ms: the solicitations were not a second apart"
    echo "ok: weir fetch $url: $(grep -m1 EHOSTUNREACH "$WORK/fetch.log") after $ms ms"
  done ;;
dad)
  # Linux already holds weir's IPv6 address: weir's duplicate address
  # detection probe (RFC 4862 §5.4.2) is answered, weir refuses the address
  # and exits 1 before serving; tshark on Linux's end sees weir's MLDv2
  # report for the solicited-node group (RFC 3810 §5.2) before the probe.
  [ "$DEV" = packet ] || interop_skip "dad: --packet only"
  command -v tshark >/dev/null || interop_skip "no tshark"
  ip -n "$K" -6 addr add $W6/64 dev "$KDEV" nodad
  # weir's end up first, and Linux's end ready to send (its qdisc no longer
  # noop: linkwatch activates it some time after the carrier comes up), or
  # Linux's answer to a probe weir sends at once may be dropped unsent.
  ip -n "$W" link set "$WDEV" up
  wait_for 50 sh -c "ip -n $K link show $KDEV | grep -q LOWER_UP && ! tc -n $K qdisc show dev $KDEV | grep -q noop" \
    || fail "Linux's end of the veth did not come up"
  # Live, line by line: weir's MLD reports (hop limit 1, Hop-by-Hop
  # header) and DAD probes (from ::), as Linux's end receives them.
  sn=ff02::1:ff00:1  # solicited-node group of $W6 (RFC 4291 §2.7.1)
  ip netns exec "$K" tshark -l -i "$KDEV" -Y "(icmpv6.type == 143 && icmpv6.mldr.mar.multicast_address == $sn \
      && ipv6.hlim == 1 && ipv6.hopopts) || (icmpv6.type == 135 && ipv6.src == :: && icmpv6.nd.ns.target_address == $W6)" \
      -T fields -e frame.number -e icmpv6.type >"$WORK/seen.txt" 2>"$WORK/tshark.log" &
  PIDS+=($!)
  wait_for 10 grep -q Capturing "$WORK/tshark.log" || fail "tshark did not start"
  t0=$(date +%s%N)
  if timeout 20 "$WEIR" serve "${DEVARGS[@]}" "${ADDRS[@]}" --control "$CTL" --app echo --port 7007 \
      >"$WORK/weir.log" 2>&1; then
    fail "weir serve started with an address Linux holds"
  fi
  ms=$((($(date +%s%N) - t0) / 1000000))
  grep -q "$W6 is already in use" "$WORK/weir.log" || { cat "$WORK/weir.log"; fail "no duplicate address error"; }
  echo "ok: weir refused $W6 after $ms ms: $(grep -m1 'already in use' "$WORK/weir.log")"
  wait_for 50 grep -q "[[:space:]]135$" "$WORK/seen.txt" || { cat "$WORK/seen.txt"; fail "Linux saw no DAD probe for $W6"; }
  grep -q "[[:space:]]143$" "$WORK/seen.txt" || { cat "$WORK/seen.txt"; fail "Linux saw no MLDv2 report for $sn"; }
  [ "$(head -1 "$WORK/seen.txt" | cut -f2)" = 143 ] || { cat "$WORK/seen.txt"; fail "the probe went before the report"; }
  echo "ok: Linux saw weir's MLDv2 report for $sn, then its DAD probe" ;;
*) fail "unknown mode $MODE" ;;
esac
echo PASS

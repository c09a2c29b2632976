#!/usr/bin/env bash
# weir <-> Linux through `weir emu` with long delay and loss: weir serves a
# file that curl (Linux) downloads, and `weir fetch` downloads one from
# python3 -m http.server (Linux); both byte-exact, IPv4 and IPv6 (one
# direction each, to stay short); nc (Linux) round-trips a file through
# `weir serve --app echo`, crossing the lossy path both ways. weir sits one forwarding hop behind the
# emulator in each case: A --emu-- B, weir's TUN hanging off B (serve) or A (fetch).
set -u
. "$(dirname "$0")/lib.sh"
interop_init emu_weir
command -v curl >/dev/null || interop_skip "no curl"
MB=${EMU_MB:-1}  # long delay and loss: a small transfer keeps the test short
A=$(ns_add a); B=$(ns_add b)
tun_add "$A" ta 10.9.0.1/24 fd09::1/64
tun_add "$B" tb 10.9.0.2/24 fd09::2/64
for ns in "$A" "$B"; do
  ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
done
ip -n "$A" route add 192.0.2.0/24 via 10.9.0.2 dev ta
ip -n "$A" -6 route add fd00:77::/64 via fd09::2 dev ta
ip -n "$B" route add 198.51.100.0/24 via 10.9.0.1 dev tb
ip -n "$B" -6 route add fd00:88::/64 via fd09::1 dev tb
link_toml "$WORK/link.toml" "rate = \"${EMU_RATE:-50Mbit}\"" "delay = \"${EMU_DELAY:-50ms}\"" \
  "loss = \"${EMU_LOSS:-1%}\"" "queue = 1000"
bg emu "$WEIR" emu --a "$A:ta" --b "$B:tb" --link "$WORK/link.toml" --json "$WORK/emu.json"
EMU=$LAST_PID
wait_for 10 grep -q running "$WORK/emu.log" || fail "weir emu did not start"
mkdir -p "$WORK/www"; make_file "$WORK/www/blob" "$MB"
WANT=$(sha "$WORK/www/blob")

# weir -> Linux: weir serves in B; curl in A.
bg weir "$WEIR" serve --netns "$B" --tun wb --addr 192.0.2.1/24 --addr fd00:77::1/64 \
  --peer 192.0.2.2/24 --peer fd00:77::2/64 --control "$WORK/ctl.sock" --app http "$WORK/www"
WS=$LAST_PID
wait_for 10 test -S "$WORK/ctl.sock" || fail "weir serve did not start"
timeout 20 ip netns exec "$A" curl -sSf --max-time 20 -o "$WORK/got" "http://192.0.2.1/blob" || fail "curl through emu"
[ "$(sha "$WORK/got")" = "$WANT" ] || fail "sha256 mismatch (weir -> Linux through emu)"
echo "ok: weir -> Linux through emu ($MB MB, IPv4)"
kill -TERM "$WS"; wait "$WS" || fail "weir serve exit status"

# nc echo: the same file out and back through the emulated path (IPv6).
if command -v nc >/dev/null; then
  rm -f "$WORK/ctl.sock"
  bg weir-echo "$WEIR" serve --netns "$B" --tun wb --addr 192.0.2.1/24 --addr fd00:77::1/64 \
    --peer 192.0.2.2/24 --peer fd00:77::2/64 --control "$WORK/ctl.sock" --app echo --port 7007
  WS=$LAST_PID
  wait_for 10 test -S "$WORK/ctl.sock" || fail "weir serve --app echo did not start"
  head -c 262144 "$WORK/www/blob" >"$WORK/small"
  timeout 20 ip netns exec "$A" nc -N -w 15 fd00:77::1 7007 <"$WORK/small" >"$WORK/back" || fail "nc through emu"
  cmp -s "$WORK/small" "$WORK/back" || fail "echo through emu differs: $(stat -c %s "$WORK/back") bytes back"
  echo "ok: nc echo through emu (256 KB, IPv6)"
  kill -TERM "$WS"; wait "$WS" || fail "weir serve (echo) exit status"
else
  echo "note: no nc, echo through emu not checked"
fi

# Linux -> weir: python serves in B; weir fetch runs on a TUN in A.
(cd "$WORK/www" && exec ip netns exec "$B" python3 -m http.server -b :: 8082) >"$WORK/py.log" 2>&1 &
PIDS+=($!)
tun_add "$A" wa 198.51.100.2/24 fd00:88::2/64
wait_for 10 ip netns exec "$B" curl -sf -o /dev/null "http://127.0.0.1:8082/" || fail "python http.server"
timeout 20 "$WEIR" fetch -q --netns "$A" --tun wa --addr 198.51.100.1/24 --addr fd00:88::1/64 -o "$WORK/got6" \
  --sha256 "$WANT" --timeout 19 "http://[fd09::2]:8082/blob" >"$WORK/fetch.log" 2>&1 || fail "weir fetch through emu"
echo "ok: Linux -> weir through emu ($MB MB, IPv6)"
kill -INT "$EMU"; wait "$EMU"
python3 - "$WORK/emu.json" <<'P' || fail "emu saw no loss"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["a_to_b"]["drop_loss"] + j["b_to_a"]["drop_loss"] > 0
P
echo PASS

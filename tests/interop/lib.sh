# Shared set-up for the interop tests: namespaces, TUN devices, clean-up.
# Each test sources this, calls interop_init NAME, and gets unique names
# (so ctest -j can run several at once) and a trap that removes everything.
# A test needs root and /dev/net/tun; without either it reports SKIPPED
# (exit 77, registered as SKIP_RETURN_CODE) with the reason.

interop_skip() { echo "SKIPPED: $*"; exit 77; }

interop_init() {
  [ "$(id -u)" -eq 0 ] || interop_skip "needs root (network namespaces, TUN)"
  [ -c /dev/net/tun ] || interop_skip "no /dev/net/tun"
  command -v ip >/dev/null || interop_skip "no iproute2 'ip'"
  WEIR=${WEIR:?WEIR must point at the weir binary}
  # Short, unique prefix: interface names are limited to 15 characters.
  P="w$(printf %x $$ | tail -c 5)"
  WORK=$(mktemp -d /tmp/weir-interop-$1.XXXXXX)
  PIDS=()
  trap interop_cleanup EXIT
  trap 'exit 1' INT TERM
}

interop_cleanup() {
  local rc=$?
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  # ns_add runs in $(...) subshells, so the names are kept in a file.
  if [ -f "$WORK/nses" ]; then
    while read -r ns; do ip netns del "$ns" 2>/dev/null; done < "$WORK/nses"
  fi
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 30 "$f"; }; done
  fi
  rm -rf "$WORK"
  exit $rc
}

# ns_add SUFFIX -> prints the namespace name; loopback up.
ns_add() {
  local ns="$P$1"
  # A namespace left by a killed run whose pid ended the same way.
  ip netns del "$ns" 2>/dev/null
  ip netns add "$ns" || exit 1
  echo "$ns" >> "$WORK/nses"
  ip -n "$ns" link set lo up
  echo "$ns"
}

# tun_add NS DEV [CIDR...]: a persistent TUN in NS, addresses on the kernel side, up.
tun_add() {
  local ns=$1 dev=$2; shift 2
  ip -n "$ns" tuntap add dev "$dev" mode tun || exit 1
  for a in "$@"; do
    case $a in *:*) ip -n "$ns" -6 addr add "$a" dev "$dev" nodad ;; *) ip -n "$ns" addr add "$a" dev "$dev" ;; esac
  done
  ip -n "$ns" link set "$dev" up
}

# bg NAME CMD...: runs in the background, logs to $WORK/NAME.log, remembered for clean-up.
bg() {
  local name=$1; shift
  "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  LAST_PID=$!
}

# wait_for SECONDS CMD...: polls CMD every 0.1 s until it succeeds.
wait_for() {
  local t=$1; shift
  local n=$((t * 10))
  while [ $n -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; n=$((n - 1)); done
  echo "timed out waiting for: $*"; return 1
}

# make_file PATH MB: deterministic pseudo-random content.
make_file() {
  head -c $(($2 * 1048576)) /dev/urandom >"$1"
}

# link_toml FILE KEY=VALUE...: a `weir emu` link file (the lab's scenario
# format) with the same model in both directions.
link_toml() {
  local f=$1; shift
  { echo "seed = 7"; for d in fwd rev; do echo "[link.$d]"; printf '%s\n' "$@"; done; } >"$f"
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

fail() { echo "FAIL: $*"; exit 1; }

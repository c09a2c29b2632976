#!/usr/bin/env bash
# The seed-004 experiment replayed on real stacks (issue 8): Linux CUBIC and
# weir CUBIC each send MB megabytes through `weir emu` configured as the
# seed's path (50 Mbit/s, 75 ms each way = 150 ms RTT, 619-packet drop-tail
# buffer), one emulator run per sender so each gets its own timing record.
#
# Which detector ended slow start, and at what cwnd:
#  - Linux: the sender namespace's MIB (nstat TcpExtTCPHystartTrainDetect /
#    TrainCwnd / DelayDetect / DelayCwnd: exact, counted by tcp_cubic when
#    it sets ssthresh), cross-checked against `ss -ti` samples (every ~10 ms:
#    the first sample showing ssthresh, and whether anything had been
#    retransmitted by then);
#  - weir: `weir ss`'s hystart_exit:REASON@CWND, and the same ss samples.
#
# Both senders are pinned to CUBIC: a new namespace inherits the host's
# default congestion control (bbr on the machine this was written on), and
# only the initial namespace may default to an algorithm outside
# tcp_allowed_congestion_control, so Linux's server sets TCP_CONGESTION on
# its listening socket and the summary prints the algorithm `ss` showed.
# weir serve runs under SCHED_FIFO (SENDER_RT, default 40, below the
# emulator's 50): Linux's sender handles each ACK inside the emulator's own
# real-time thread (a TUN write runs the receiving stack), so without this
# weir's ACK arrival times would carry the shared machine's scheduling
# delays and Linux's would not.
#
# Usage: bench/seed004.sh [BUILD_DIR]
#   env: MB (20), SENDER_RT (40; 0 = normal priority), RCV_RMEM (the
#   receiving namespace's tcp_rmem; default "4096 16777216 33554432", a
#   16 MB initial window as the lab's receivers have; "host" keeps the
#   host's, whose 128 KB start limits the sender), WEIR_ARGS
#   (extra `weir serve` options, e.g. a --sysctl), RCV_RT (curl's SCHED_FIFO
#   priority; 0 = normal), EMU_ARGS (extra
#   `weir emu` options, e.g. "--rt-prio 0 --spin-us 0" for the old timing),
#   RUNS (4), SENDERS ("linux weir"). Needs root.
set -u
BUILD=${1:-build/default}
WEIR=$(readlink -f "${WEIR:-$BUILD/tools/weir/weir}")
MB=${MB:-20}
SENDER_RT=${SENDER_RT:-40}
RUNS=${RUNS:-4}
SENDERS=${SENDERS:-linux weir}
. "$(dirname "$0")/../tests/interop/lib.sh"
interop_init seed004
mkdir -p "$WORK/www" && make_file "$WORK/www/blob" "$MB"
A=$(ns_add a); B=$(ns_add b)
tun_add "$A" ta 10.9.0.1/24; tun_add "$B" tb 10.9.0.2/24
ip -n "$A" route add 192.0.2.0/24 via 10.9.0.2 dev ta
ip netns exec "$B" sysctl -qw net.ipv4.ip_forward=1
# RCV_RMEM: the receiver's (curl's) tcp_rmem. With the host's 128 KB
# initial buffer, Linux's receive autotuning lags a sender in slow start by
# about an RTT at 150 ms and the sender is window-limited in the very round
# where the ACK train should end slow start (docs/lab.md).
RCV_RMEM=${RCV_RMEM:-4096 16777216 33554432}
[ "$RCV_RMEM" != host ] && ip netns exec "$A" sysctl -qw net.ipv4.tcp_rmem="$RCV_RMEM"
link_toml "$WORK/link.toml" 'rate = "50Mbit"' 'delay = "75ms"' 'queue = 619'

start_emu() {  # start_emu NAME
  # shellcheck disable=SC2086
  bg "emu-$1" "$WEIR" emu --a "$A:ta" --b "$B:tb" --link "$WORK/link.toml" --json "$WORK/emu-$1.json" ${EMU_ARGS:-}
  EMU=$LAST_PID
  wait_for 10 grep -q running "$WORK/emu-$1.log" || fail "weir emu did not start"
}
stop_emu() { kill -INT "$EMU"; wait "$EMU"; }

# sample FILE CMD...: CMD every ~10 ms while $XFER runs, each output
# prefixed by "@ <monotonic seconds>". The samplers run SCHED_FIFO 30 (they
# mostly sleep): at normal priority on a loaded machine they managed one
# sample per 0.3-1 s, too few to see a 150 ms round.
sample() {
  local out=$1; shift
  : >"$out"
  while kill -0 "$XFER" 2>/dev/null; do
    { echo "@ $(cut -d' ' -f1 /proc/uptime)"; "$@"; } >>"$out" 2>/dev/null
    sleep 0.01
  done
}

# summary NAME SAMPLES EMU_JSON [NSTAT_FILE]: one JSON line.
summary() {
  python3 - "$@" <<'P'
import json, re, sys
name, samples, emu = sys.argv[1:4]
nst = sys.argv[4] if len(sys.argv) > 4 else None
r = {"sender": name}
peak, first, hy = 0, None, None
for line in open(samples):
    c = re.search(r"(?:^|\s)cwnd:(\d+)", line)
    if not c:
        continue
    cwnd = int(c.group(1))
    t = re.search(r"(?:^|\s)ssthresh:(\d+)", line)
    if first is None:
        peak = max(peak, cwnd)
        if t:
            rt = re.search(r"bytes_retrans:(\d+)", line)
            first = {"cwnd": cwnd, "ssthresh": int(t.group(1)), "bytes_retrans": int(rt.group(1)) if rt else 0}
    cc = re.search(r"\s(cubic|bbr|reno)\s", line)
    if cc:
        r["cc"] = cc.group(1)
    h = re.search(r"hystart_exit:([a-z+-]+)@(\d+)", line)
    if h and hy is None:  # the first exit (a later slow start, after an RTO or undo, may exit again)
        hy = (h.group(1), int(h.group(2)))
    if first is None and (rw := re.search(r"rwnd_limited:(\d+)ms", line)):
        r["rwnd_limited_ms_before_exit"] = int(rw.group(1))
r["peak_cwnd_before_exit"] = peak
r["first_ssthresh_sample"] = first
if nst:
    m = dict((k, int(v)) for k, v in re.findall(r"^(\S+)\s+(\d+)", open(nst).read(), re.M))
    r["mib"] = m
# The MIB counts a detection in any slow start, also one after an RTO or an
# undo: it names the first exit only if nothing was retransmitted before the
# first sample that shows ssthresh.
if nst and hy is None and first is not None and first["bytes_retrans"] == 0:
    if m.get("TcpExtTCPHystartTrainDetect"):
        hy = ("ack-train", m["TcpExtTCPHystartTrainCwnd"] // m["TcpExtTCPHystartTrainDetect"])
    elif m.get("TcpExtTCPHystartDelayDetect"):
        hy = ("delay", m["TcpExtTCPHystartDelayCwnd"] // m["TcpExtTCPHystartDelayDetect"])
if hy is None and first is not None:
    hy = ("loss" if first["bytes_retrans"] > 0 else "unknown", first["cwnd"])
r["detector"], r["exit_cwnd"] = hy if hy else ("none", 0)
j = json.load(open(emu))
r["emu"] = {d: {"within_50us": j[d]["timing"]["within_50us"], "mean_us": j[d]["timing"]["mean_us"],
                "p99_bound_us": j[d]["timing"]["p99_bound_us"], "max_us": j[d]["timing"]["max_us"],
                "drop_queue": j[d]["drop_queue"], "max_queue": j[d]["max_queue_packets"]} for d in ("a_to_b", "b_to_a")}
for d in ("a_to_b", "b_to_a"):
    t = j[d]["timing"]
    if "late_by_cause" in t:
        r["emu"][d]["late_by_cause"] = {k: v["count"] for k, v in t["late_by_cause"].items() if v["count"]}
        r["emu"][d]["gaps_over_2ms"] = t["gaps_over_2ms"]
r["emu"]["realtime"] = j.get("realtime")
r["emu"]["timer_wake_late"] = j.get("timer_wake_late")
print(json.dumps(r))
P
}

nstat_diff() {  # counters in $WORK/nstat1 minus $WORK/nstat0
  python3 - "$WORK/nstat0" "$WORK/nstat1" <<'P'
import re, sys
a, b = (dict(re.findall(r"^(\S+)\s+(\d+)", open(f).read(), re.M)) for f in sys.argv[1:3])
for k, v in b.items():
    print(k, int(v) - int(a.get(k, 0)))
P
}

# python's http.server with TCP_CONGESTION=cubic on the listener (accepted
# sockets inherit it; a namespace other than the initial one may only make
# an algorithm its default if tcp_allowed_congestion_control lists it).
cat >"$WORK/cubic_server.py" <<'P'
import functools, http.server, socket, sys
class Server(http.server.ThreadingHTTPServer):
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
        super().server_bind()
Server(("0.0.0.0", 8000), functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])).serve_forever()
P
ip netns exec "$B" python3 "$WORK/cubic_server.py" "$WORK/www" >"$WORK/py.log" 2>&1 &
PIDS+=($!)
RT=()
[ "$SENDER_RT" -gt 0 ] && RT=(chrt -f "$SENDER_RT")
# RCV_RT: curl (the receiver) under SCHED_FIFO too; at normal priority on a
# loaded machine it is descheduled while holding its socket, and the
# segments that arrive meanwhile are ACKed late and together.
RCV=()
[ "${RCV_RT:-0}" -gt 0 ] && RCV=(chrt -f "$RCV_RT")
bg weir "${RT[@]}" "$WEIR" serve --netns "$B" --tun we --addr 192.0.2.1/24 --peer 192.0.2.2/24 --app http "$WORK/www" \
  --sysctl net.ipv4.tcp_congestion_control=cubic --control "$WORK/w.sock" ${WEIR_ARGS:-}
wait_for 10 test -S "$WORK/w.sock" || fail "weir serve"
HY="TcpExtTCPHystartTrainDetect TcpExtTCPHystartTrainCwnd TcpExtTCPHystartDelayDetect TcpExtTCPHystartDelayCwnd"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)  kernel $(uname -r)  MB=$MB SENDER_RT=$SENDER_RT EMU_ARGS='${EMU_ARGS:-}'" \
  "receiver tcp_rmem: $(ip netns exec "$A" sysctl -n net.ipv4.tcp_rmem)"

# What the sender's namespace would use by default, and what shapes its
# sending: the namespace inherits the host's default algorithm (bbr here;
# the server sets cubic per socket), and the TUN's qdisc is the host's
# default_qdisc (no fq on this kernel, so CUBIC is not paced by a qdisc;
# TCP's own pacing only runs for algorithms that ask for it, as BBR does).
echo "sender namespace: tcp_congestion_control=$(ip netns exec "$B" sysctl -n net.ipv4.tcp_congestion_control)" \
  "default_qdisc=$(sysctl -n net.core.default_qdisc); tb: $(ip -n "$B" -br link show tb | awk '{print $1}')" \
  "$(tc -n "$B" qdisc show dev tb | head -1)"

run_linux() {  # run_linux N
  local run=$1
  start_emu "linux$run"
  # HEAD: python's server ignores Range and would send the whole file.
  wait_for 10 ip netns exec "$A" curl -sf -o /dev/null -I "http://10.9.0.2:8000/blob" || fail "http.server"
  # shellcheck disable=SC2086
  ip netns exec "$B" nstat -asz $HY >"$WORK/nstat0" 2>&1
  "${RCV[@]}" ip netns exec "$A" curl -sf -o /dev/null "http://10.9.0.2:8000/blob" & XFER=$!
  # One netns entry for the whole sampling loop: `ip netns exec` per sample
  # costs a few hundred ms on a loaded machine, ss itself a few ms.
  chrt -f 30 ip netns exec "$B" bash -c "while kill -0 $XFER 2>/dev/null; do echo \"@ \$(cut -d' ' -f1 /proc/uptime)\";
    ss -tin state established sport = :8000; sleep 0.005; done" >"$WORK/linux$run.samples" 2>/dev/null
  wait "$XFER" || fail "curl from Linux"
  # shellcheck disable=SC2086
  ip netns exec "$B" nstat -asz $HY >"$WORK/nstat1" 2>&1
  nstat_diff >"$WORK/nstat-linux$run"
  stop_emu
  summary "linux$run" "$WORK/linux$run.samples" "$WORK/emu-linux$run.json" "$WORK/nstat-linux$run" | tee -a "$WORK/results.jsonl"
}

run_weir() {  # run_weir N
  local run=$1
  start_emu "weir$run"
  wait_for 10 ip netns exec "$A" curl -sf -o /dev/null -r 0-0 "http://192.0.2.1/blob" || fail "weir serve unreachable"
  "$WEIR" ss --control "$WORK/w.sock" --nstat >"$WORK/nstat0"
  "${RCV[@]}" ip netns exec "$A" curl -sf -o /dev/null "http://192.0.2.1/blob" & XFER=$!
  chrt -f 30 bash -c "$(declare -f sample); XFER=$XFER; sample '$WORK/weir$run.samples' '$WEIR' ss --control '$WORK/w.sock'"
  wait "$XFER" || fail "curl from weir"
  "$WEIR" ss --control "$WORK/w.sock" --nstat >"$WORK/nstat1"
  nstat_diff | grep Hystart >"$WORK/nstat-weir$run"
  stop_emu
  summary "weir$run" "$WORK/weir$run.samples" "$WORK/emu-weir$run.json" "$WORK/nstat-weir$run" | tee -a "$WORK/results.jsonl"
}

for run in $(seq "$RUNS"); do
  for s in $SENDERS; do
    echo "run $run $s: load $(cut -d' ' -f1 /proc/loadavg)" >&2
    "run_$s" "$run"
  done
done
# The distribution: per sender, each run's first slow-start exit, and the
# emulator's ACK-direction (a->b) gaps over 2 ms that it made itself.
python3 - "$WORK/results.jsonl" <<'P'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for who in ("linux", "weir"):
    rs = [r for r in rows if r["sender"].startswith(who)]
    if not rs:
        continue
    print("%s:" % who, ", ".join("%s@%d (emu %.1f/%.1f%%, ACK gaps>2ms made %s)" % (
        r["detector"], r["exit_cwnd"], 100 * r["emu"]["b_to_a"]["within_50us"], 100 * r["emu"]["a_to_b"]["within_50us"],
        r["emu"]["a_to_b"].get("gaps_over_2ms", {}).get("added", "?")) for r in rs))
P
cp "$WORK"/*.samples "$WORK"/emu-*.json /tmp/ 2>/dev/null
echo "samples and emulator records copied to /tmp/{linux,weir}N.samples, /tmp/emu-*.json"

#!/usr/bin/env python3
"""The slow-start grid of issue 7: rates x RTTs x buffers x algorithms.

Runs scenarios/grid/slow-start.toml once per cell through `weir sim --set`
(two at a time), and reports per cell: the slow-start exit cwnd as a fraction
of the BDP, the retransmissions sent before slow start ended (losses in slow
start), and goodput. Writes a markdown table and an SVG plot.

  scenarios/grid/run.py --weir build/cc/tools/weir/weir --out /tmp/grid \
      --md docs/lab-grid.md --svg docs/lab-grid.svg

Durations scale with the RTT (slow start must finish: about log2(BDP/10)
rounds) so that the whole grid stays within minutes.
"""
import argparse
import concurrent.futures as cf
import csv
import json
import math
import os
import subprocess
import sys

RATES = [10, 50, 100, 1000]          # Mbit/s
RTTS = [20, 75, 150, 300]            # ms
BUFFERS = [0.25, 1, 4]               # x BDP
ALGOS = {                            # label -> host.client settings
    "cubic": {"tcp_congestion_control": "cubic"},
    "cubic+hystart++": {"tcp_congestion_control": "cubic", "tcp_cubic_hystart": "2"},
    "reno": {"tcp_congestion_control": "reno"},
    "bbr": {"tcp_congestion_control": "bbr"},
}
FRAME = 1514                         # bytes on the wire per full segment
RETRANSMIT_EVENT = 3                 # weir::TraceEvent::kRetransmit
HUGE_SSTHRESH = 0x7fffffff


def bdp_packets(rate, rtt):
    return rate * 1e6 * rtt / 1e3 / 8 / FRAME


def duration_s(rate, rtt):
    rounds = math.log2(max(bdp_packets(rate, rtt) * 4 / 10, 2)) + 5
    return round(max(2.0, rounds * rtt / 1e3 + 1.0), 2)


def run_cell(weir, base, out, algo, rate, rtt, buf, collect=False):
    bdp = bdp_packets(rate, rtt)
    queue = max(4, int(round(bdp * buf)))
    dur = duration_s(rate, rtt)
    name = f"{algo}-{rate}M-{rtt}ms-{buf}bdp".replace("+", "p")
    d = os.path.join(out, name)
    sets = [f"link.fwd.rate={rate}Mbit", f"link.rev.rate={rate}Mbit",
            f"link.fwd.delay={rtt / 2}ms", f"link.rev.delay={rtt / 2}ms",
            f"link.fwd.queue={queue}", f"duration={dur}s", f"flow.1.duration={dur}s",
            "host.client.tcp_wmem=\"4096 16384 268435456\"",
            "host.server.tcp_rmem=\"4096 131072 268435456\""]
    sets += [f"host.client.{k}={v}" for k, v in ALGOS[algo].items()]
    cmd = [weir, "sim", base, "--json", "--out", d]
    for s in sets:
        cmd += ["--set", s]
    if collect:  # --collect: only read what earlier (maybe interrupted) runs left
        if not os.path.exists(os.path.join(d, "flow1", "timeseries.csv")):
            return {"algo": algo, "rate": rate, "rtt": rtt, "buf": buf, "error": "not run"}
    else:
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode not in (0, 1):
            return {"algo": algo, "rate": rate, "rtt": rtt, "buf": buf, "error": p.stderr.strip()[:200]}
    m = json.load(open(os.path.join(d, "summary.json")))["runs"][0]["metrics"]
    # Losses in slow start: the retransmissions of the loss episode that
    # ended slow start, or of one starting within two SRTTs after a detector
    # ended it (data still in flight from slow start); counted until the
    # connection is back in Open. (Send events are not in the time series.)
    exit_t, exit_cwnd, ss_retx, horizon, episode, done = None, 0, 0, None, False, False
    with open(os.path.join(d, "flow1", "timeseries.csv")) as f:
        for row in csv.DictReader(f):
            t = float(row["time_s"])
            if exit_t is None and 0 < int(row["ssthresh"]) < HUGE_SSTHRESH:
                exit_t = t
                exit_cwnd = max(int(row["cwnd"]), int(row["ssthresh"]))
                horizon = t + 2 * int(row["srtt_us"]) / 1e6
            if exit_t is None or done:
                continue
            if row["ca_state"] != "Open":
                if not episode and t > horizon:
                    done = True
                    continue
                episode = True
                if int(row["event"]) == RETRANSMIT_EVENT:
                    ss_retx += 1
            elif episode:
                done = True
    hy = m.get("flow.1.hystart_exit_cwnd", 0)
    if hy:
        exit_cwnd = hy
    return {"algo": algo, "rate": rate, "rtt": rtt, "buf": buf, "bdp": bdp, "queue": queue,
            "dur": dur, "exit_cwnd": exit_cwnd, "exit_frac": exit_cwnd / bdp if exit_cwnd else 0,
            "exit_reason": int(m.get("flow.1.hystart_exit_reason", 0)),
            "ss_retx": ss_retx, "retx": int(m.get("flow.1.retrans_segs", 0)),
            "goodput": m.get("flow.1.goodput_mbps", 0), "util": m.get("flow.1.goodput_mbps", 0) / rate}


REASONS = {0: "-", 1: "train", 2: "delay", 3: "loss", 4: "css"}


def read_md(path):
    """Rows of an earlier table (this script's own --md output), keyed by cell.

    A row's `run` column says which run it came from; tables written before
    that column existed are labelled "s2" (rows before the first '## '
    heading: the 30 Nov 06:10 run) and "s3" (rows after it). A measured row
    wins over an 'error: not run' row of the same cell."""
    rows, label = {}, "s2"
    reasons = {v: k for k, v in REASONS.items()}
    for line in open(path):
        if line.startswith("## "):
            label = "s3"
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) < 5 or not c[1].isdigit():
            continue
        buf = float(c[3])
        buf = int(buf) if buf.is_integer() else buf
        key = (c[0], int(c[1]), int(c[2]), float(buf))
        r = {"algo": c[0], "rate": int(c[1]), "rtt": int(c[2]), "buf": buf, "run": label}
        if c[4].startswith("error"):
            r["error"] = c[4][len("error: "):]
        else:
            if len(c) > 12:
                r["run"] = c[12]
            r.update({"bdp": float(c[4]), "exit_cwnd": float(c[5]), "exit_frac": float(c[6]),
                      "exit_reason": reasons.get(c[7], 0), "ss_retx": int(c[8]), "retx": int(c[9]),
                      "goodput": float(c[10]), "util": float(c[11].rstrip("%")) / 100})
        if key not in rows or "error" in rows[key]:
            rows[key] = r
    return rows


def table(rows):
    out = ["| algorithm | rate | RTT | buffer | BDP pkts | ss exit cwnd | exit / BDP | exit by | retx in ss | retx total | goodput Mbit/s | of rate | run |",
           "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['algo']} | {r['rate']} | {r['rtt']} | {r['buf']} | error: {r['error']} |")
            continue
        out.append(f"| {r['algo']} | {r['rate']} | {r['rtt']} | {r['buf']} | {r['bdp']:.0f} | {r['exit_cwnd']:.0f} | "
                   f"{r['exit_frac']:.2f} | {REASONS.get(r['exit_reason'], '?')} | {r['ss_retx']} | {r['retx']} | "
                   f"{r['goodput']:.1f} | {r['util']:.0%} | {r.get('run', '')} |")
    return "\n".join(out) + "\n"


def svg(rows):
    """Exit cwnd / BDP per cell, one colour per algorithm, one panel per buffer."""
    colors = {"cubic": "#1f77b4", "cubic+hystart++": "#ff7f0e", "reno": "#2ca02c", "bbr": "#d62728"}
    cells = [(rate, rtt) for rate in RATES for rtt in RTTS]
    pw, ph, ml, mt = 560, 220, 50, 30
    h = mt + len(BUFFERS) * (ph + 60) + 40
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{ml + pw + 20}" height="{h}" font-family="sans-serif" font-size="10">',
         f'<text x="{ml}" y="16" font-size="13">slow-start exit cwnd / BDP (log scale, 0.1 .. 10); bars per rate/RTT cell</text>']
    def y_of(v, top):
        v = min(max(v, 0.1), 10)
        return top + ph - (math.log10(v) + 1) / 2 * ph
    for bi, buf in enumerate(BUFFERS):
        top = mt + 10 + bi * (ph + 60)
        o.append(f'<text x="{ml}" y="{top - 4}" font-size="11">buffer {buf} BDP</text>')
        o.append(f'<rect x="{ml}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
        for v in (0.1, 0.5, 1, 2, 10):
            y = y_of(v, top)
            o.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
                     f'<text x="{ml - 4}" y="{y + 3:.1f}" text-anchor="end">{v}</text>')
        cw = pw / len(cells)
        for ci, (rate, rtt) in enumerate(cells):
            x0 = ml + ci * cw
            o.append(f'<text x="{x0 + cw / 2:.1f}" y="{top + ph + 12}" text-anchor="middle" font-size="7">{rate}M</text>'
                     f'<text x="{x0 + cw / 2:.1f}" y="{top + ph + 21}" text-anchor="middle" font-size="7">{rtt}ms</text>')
            for ai, algo in enumerate(ALGOS):
                r = next((r for r in rows if r["algo"] == algo and r["rate"] == rate and r["rtt"] == rtt
                          and r["buf"] == buf and "error" not in r), None)
                if not r or not r["exit_frac"]:
                    continue
                bx = x0 + 2 + ai * (cw - 4) / len(ALGOS)
                y = y_of(r["exit_frac"], top)
                o.append(f'<rect x="{bx:.1f}" y="{y:.1f}" width="{(cw - 4) / len(ALGOS) - 1:.1f}" '
                         f'height="{top + ph - y:.1f}" fill="{colors[algo]}"/>')
    ly = h - 20
    for ai, algo in enumerate(ALGOS):
        o.append(f'<rect x="{ml + ai * 130}" y="{ly - 9}" width="10" height="10" fill="{colors[algo]}"/>'
                 f'<text x="{ml + ai * 130 + 14}" y="{ly}">{algo}</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weir", default="build/default/tools/weir/weir")
    ap.add_argument("--base", default=os.path.join(os.path.dirname(__file__), "slow-start.toml"))
    ap.add_argument("--out", default="/tmp/weir-grid")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rates", default=",".join(map(str, RATES)))
    ap.add_argument("--algos", default=",".join(ALGOS))
    ap.add_argument("--rtts", default=",".join(map(str, RTTS)), help="ms, a subset of the grid's")
    ap.add_argument("--buffers", default=",".join(map(str, BUFFERS)), help="x BDP, a subset of the grid's")
    ap.add_argument("--collect", action="store_true", help="tabulate existing outputs, run nothing")
    ap.add_argument("--merge", help="an earlier --md table: cells not run (or not found with --collect) "
                    "are taken from it")
    ap.add_argument("--label", default="", help="run label for the cells measured now (the table's run column)")
    ap.add_argument("--md")
    ap.add_argument("--svg")
    a = ap.parse_args()
    rates = [int(x) for x in a.rates.split(",")]
    algos = a.algos.split(",")
    rtts = [int(x) for x in a.rtts.split(",")]
    bufs = [b for b in BUFFERS if str(b) in a.buffers.split(",")]
    cells = [(al, ra, rt, bu) for ra in rates for rt in rtts for bu in bufs for al in algos]
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        rows = list(ex.map(lambda c: run_cell(a.weir, a.base, a.out, *c, collect=a.collect), cells))
    for r in rows:
        r.setdefault("run", a.label)
    if a.merge:
        old = read_md(a.merge)
        fresh = {(r["algo"], r["rate"], r["rtt"], float(r["buf"])): r for r in rows if "error" not in r}
        for k, r in old.items():
            fresh.setdefault(k, r)
        rows = list(fresh.values())
    rows.sort(key=lambda r: (list(ALGOS).index(r["algo"]), r["rate"], r["rtt"], r["buf"]))
    json.dump(rows, open(os.path.join(a.out, "grid.json"), "w"), indent=1)
    md = table(rows)
    if a.md:
        open(a.md, "w").write(md)
    else:
        sys.stdout.write(md)
    if a.svg:
        open(a.svg, "w").write(svg(rows))


if __name__ == "__main__":
    main()

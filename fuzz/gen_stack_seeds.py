#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_stack (fuzz/corpus/stack/) and documents its
program format; fuzz_stack.cc is the reference decoder.

  byte 0      config: 01 no SACK, 02 no TS, 04 no WS, 08 no RACK, 10 reno,
              20 small rcvbuf, 40 small sndbuf, 80 IPv6
  handshake   o:u8 window:u16 [mss:u16 if o&1] [ws:u8 if o&2] (o&4 SACK-perm)
              [tsval:u32 if o&8] [mtu:u16 if o&16]
  ops         k:u8, by k % 13:
   0 segment  flags modes seq* ack* win:u16 [sport:u16 if modes&10] opts pay
   1 raw-opt  flags modes seq* ack* win:u16 [sport] n:u8 bytes[n] [doff:u8 if modes&20] pay
              modes&3 / (modes>>2)&3: seq / ack = 0 base, 1 base+i8, 2 base+i16*16, 3 raw u32
              (seq base: the stack's last ACK; ack base: the highest seq it sent)
              opts: b:u8; 01 TS(now, echo) 02 TS(u32,u32) 04 SACK n:u8 {i8*64 off, u16 len/2}
                    08 MSS u16, 10 WS u8, 20 SACK-perm
              pay: u16 % 9000 if modes&40 else u8*8 bytes
   2 advance u8 ms   3 advance u8*100 ms   4 run the next timer
   5 send / 6 recv (odd n: MSG_PEEK) / 7 shutdown(n%3) / 8 close / 9 accept: sock:u8 n:u16
  10 setsockopt sock:u8 which:u8 value:u32
  11 ICMP error type:u8 code:u8 mtu:u16 seqmode:u8 seq*
  12 the peer ACKs all it got: win:u16 [+ in-order data u16%1500 if k&80]
"""
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "stack")
FIN, SYN, RST, PSH, ACK, URG, ECE, CWR = 1, 2, 4, 8, 16, 32, 64, 128


def u8(v): return struct.pack(">B", v & 0xFF)
def u16(v): return struct.pack(">H", v & 0xFFFF)
def u32(v): return struct.pack(">I", v & 0xFFFFFFFF)


def hs(cfg=0, win=65535, mss=1460, ws=7, sack=True, ts=True, mtu=None):
    o = (1 if mss is not None else 0) | (2 if ws is not None else 0) | (4 if sack else 0)
    o |= (8 if ts else 0) | (16 if mtu is not None else 0)
    b = u8(cfg) + u8(o) + u16(win)
    if mss is not None: b += u16(mss)
    if ws is not None: b += u8(ws)
    if ts: b += u32(12345)
    if mtu is not None: b += u16(mtu - 576)
    return b


def seg(flags=ACK, seq=0, ack=0, win=65535, ts=True, sacks=(), pay=0, seq_raw=None, ack_raw=None, sport=None):
    """seq/ack: offsets from the bases (i8 when small, i16*16 otherwise)."""
    def num(off, raw):
        if raw is not None: return 3, u32(raw)
        if off == 0: return 0, b""
        if -128 <= off < 128: return 1, u8(off)
        return 2, u16(off // 16)
    sm, sb = num(seq, seq_raw)
    am, ab = num(ack, ack_raw)
    modes = sm | am << 2 | (0x10 if sport else 0) | (0x40 if pay > 255 * 8 else 0)
    b = u8(0) + u8(flags) + u8(modes) + sb + ab + u16(win)
    if sport: b += u16(sport)
    ob = (1 if ts else 0) | (4 if sacks else 0)
    b += u8(ob)
    if sacks:
        b += u8(len(sacks) - 1)
        for off, ln in sacks: b += u8(off // 64) + u16(ln * 2)
    b += u16(pay) if modes & 0x40 else u8(pay // 8)
    return b


def rawseg(opts, flags=ACK, win=65535, pay=0, doff=None):
    modes = 0x20 if doff is not None else 0
    b = u8(1) + u8(flags) + u8(modes) + u16(win) + u8(len(opts)) + bytes(opts)
    if doff is not None: b += u8(doff)
    return b + u8(pay // 8)


def adv_ms(ms): return u8(2) + u8(ms)
def adv_100ms(n): return u8(3) + u8(n)
def next_timer(): return u8(4)
def send(n, sock=0): return u8(5) + u8(sock) + u16(n)
def recv(n, sock=0): return u8(6) + u8(sock) + u16(n)
def shutdown(how, sock=0): return u8(7) + u8(sock) + u16(how)
def close(sock=0): return u8(8) + u8(sock) + u16(0)
def accept(): return u8(9) + u8(0) + u16(0)
def sockopt(which, v, sock=0): return u8(10) + u8(sock) + u8(which) + u32(v)
def icmp(t, c, mtu, seqoff=0): return u8(11) + u8(t) + u8(c) + u16(mtu) + u8(1) + u8(seqoff)
def ackall(win=65535, data=0):
    return (u8(12 + 13 * 10) + u16(win) + u16(data)) if data else (u8(12) + u16(win))


seeds = {}
seeds["bulk_send_acked"] = hs() + send(30000) + (adv_ms(20) + ackall()) * 8 + recv(100)
seeds["peer_data_in_order"] = hs() + ackall(data=1000) + ackall(data=1448) + recv(5000) + adv_ms(200)
seeds["peer_data_ooo_then_fill"] = hs() + seg(seq=1400 // 16 * 16, pay=800) + seg(seq=3200 // 16 * 16, pay=800) + \
    seg(pay=1400) + recv(9000) + adv_ms(50)
seeds["sack_after_loss"] = hs() + send(40000) + adv_ms(30) + seg(sacks=[(1536, 3000)]) + \
    seg(sacks=[(1536, 6000)]) + seg(sacks=[(1536, 9000)]) + adv_ms(40) + ackall() + next_timer()
seeds["sack_every_other"] = hs() + send(60000) + adv_ms(30) + \
    seg(sacks=[(128, 64), (384, 64), (640, 64), (896, 64)]) * 4 + next_timer() + ackall()
seeds["dsack"] = hs() + send(8000) + adv_ms(30) + ackall() + seg(sacks=[(-512, 512)]) + adv_ms(100)
seeds["rto_backoff"] = hs() + send(5000) + next_timer() * 6 + adv_100ms(255) + ackall()
seeds["peer_fin_app_close"] = hs() + ackall(data=300) + seg(flags=ACK | FIN) + recv(1000) + close() + \
    adv_ms(100) + ackall() + adv_100ms(255)
seeds["app_close_first"] = hs() + send(2000) + close() + adv_ms(10) + ackall() + seg(flags=ACK | FIN) + \
    adv_100ms(255) + next_timer()
seeds["shutdown_wr"] = hs() + send(1000) + shutdown(1) + adv_ms(5) + ackall() + ackall(data=500) + recv(600)
seeds["rst_in_window"] = hs() + seg(flags=RST, seq=100) + seg(flags=RST) + recv(10)
seeds["syn_in_window"] = hs() + seg(flags=SYN, seq=5) + adv_ms(1) + seg(flags=SYN | ACK)
seeds["zero_window_persist"] = hs() + send(20000) + ackall(win=0) + next_timer() * 5 + ackall(win=2000) + \
    adv_100ms(30)
seeds["icmp_frag_needed"] = hs() + send(10000) + icmp(3, 4, 1200) + adv_ms(50) + ackall()
seeds["icmp_unreach_soft"] = hs() + send(1000) + icmp(3, 1, 0) + next_timer() * 3
seeds["icmp_v6_ptb"] = hs(cfg=0x80) + send(10000) + icmp(2, 0, 1280) + adv_ms(50) + ackall()
seeds["raw_opts_garbage"] = hs() + rawseg([1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]) + \
    rawseg([5, 10, 0, 0, 0, 0, 0, 0, 0, 0]) + rawseg([2, 1]) + rawseg([254, 6, 0xf9, 0x89, 0, 0])
seeds["bad_data_offset"] = hs() + rawseg([], doff=15, pay=64) + rawseg([], doff=3)
seeds["sockopts"] = hs() + sockopt(0, 1) + sockopt(1, 1) + send(3000) + sockopt(1, 0) + sockopt(2, 536) + \
    sockopt(8, 3000) + sockopt(10, 8192) + send(9000) + next_timer() * 8
seeds["user_timeout"] = hs() + sockopt(8, 1500) + send(2000) + next_timer() * 10
seeds["keepalive"] = hs() + sockopt(13, 1) + sockopt(5, 10) + sockopt(6, 5) + sockopt(7, 2) + adv_100ms(200) * 3
seeds["listener_second_conn"] = hs() + seg(flags=SYN, seq_raw=777, sport=40000) + accept() + adv_ms(5) + \
    seg(flags=ACK, seq_raw=778, sport=40000) + accept() + send(100, sock=2)
seeds["syn_flood_small"] = hs() + b"".join(seg(flags=SYN, seq_raw=1000 * i, sport=30000 + i) for i in range(20))
seeds["optimistic_ack"] = hs() + send(20000) + seg(ack=3000) + seg(ack=30000 // 16 * 16) + adv_ms(10)
seeds["old_ack_dupacks"] = hs() + send(20000) + adv_ms(20) + seg(ack=-100) + seg() * 4 + adv_ms(10) + ackall()
seeds["no_sack_no_ts"] = hs(cfg=0x03, sack=False, ts=False, ws=None) + send(20000) + adv_ms(10) + seg() * 4 + \
    next_timer() + ackall()
seeds["reno_no_rack"] = hs(cfg=0x18) + send(30000) + adv_ms(10) + seg(sacks=[(1536, 3000)]) * 3 + ackall()
seeds["small_rcvbuf_ooo"] = hs(cfg=0x20) + b"".join(seg(seq=2048 + 1024 * i, pay=1000) for i in range(12)) + \
    seg(pay=1000) + recv(20000)
seeds["small_sndbuf"] = hs(cfg=0x40) + send(60000) + ackall() + send(60000) + adv_ms(10)
seeds["ipv6_bulk"] = hs(cfg=0x80) + send(20000) + (adv_ms(20) + ackall()) * 4 + ackall(data=1200) + recv(2000)
seeds["tiny_mss"] = hs(mss=48) + send(4000) + adv_ms(10) + ackall() + adv_ms(10)
seeds["big_mtu_ws14"] = hs(ws=14, mtu=9000, mss=8960) + send(60000) + ackall() + adv_ms(5)
seeds["ecn_flags"] = hs() + send(4000) + seg(flags=ACK | ECE) + seg(flags=ACK | CWR, pay=100) + ackall()
seeds["urg_and_psh"] = hs() + seg(flags=ACK | URG | PSH, pay=50) + recv(60)
seeds["peek_then_read"] = hs() + ackall(data=700) + recv(101) + recv(700)
seeds["ts_raw_values"] = hs() + u8(0) + u8(ACK) + u8(0) + u16(65535) + u8(2) + u32(0x7fffffff) + u32(0) + u8(0) + \
    u8(0) + u8(ACK) + u8(0) + u16(65535) + u8(2) + u32(1) + u32(0xffffffff) + u8(8)

os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {out}")

#!/usr/bin/env python3
"""Measures when this machine's Linux fires the RACK reordering timer.

The shape of packetdrill's fast_retransmit/fr-4pkt-fack-last-mss (4 x 1000
bytes sent, 100 ms later a SACK of the last segment) and, with arguments
`cubic 10 8`, of sack/sack-shift-sacked-7-5-6-8-9-fack (10 segments, SACK
of the 8th), replayed against the running kernel through a TUN device.
Run it in a private network namespace so nothing on the host changes:

    unshare -n python3 tools/experiments/rack_reo_timer.py cubic 4 4

It prints the RTT the kernel saw and how long after the SACK it resent
1:1001. Needs root and /dev/net/tun. A manual experiment, not a test: its
timing is the host's (see docs/conformance.md, fr-4pkt-fack-last-mss).
"""
import fcntl, os, socket, struct, time, select, subprocess, sys

def sh(c): subprocess.run(c, shell=True, check=True)
def sysctl(k, v): open('/proc/sys/net/ipv4/' + k, 'w').write(str(v))

TUNSETIFF = 0x400454ca
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
fd = os.open('/dev/net/tun', os.O_RDWR)
fcntl.ioctl(fd, TUNSETIFF, struct.pack('16sH', b'tun0', IFF_TUN | IFF_NO_PI))
sh('ip link set lo up; ip link set tun0 up; ip addr add 192.168.0.1/24 dev tun0; ip route add 192.0.2.0/24 dev tun0')
for k, v in [('tcp_congestion_control', sys.argv[1] if len(sys.argv) > 1 else 'cubic'), ('tcp_timestamps', 1), ('tcp_sack', 1),
             ('tcp_dsack', 1), ('tcp_frto', 2), ('tcp_reordering', 3), ('tcp_slow_start_after_idle', 0),
             ('tcp_early_retrans', 4), ('tcp_recovery', 1), ('tcp_ecn', 0), ('tcp_min_tso_segs', 2)]:
    try: sysctl(k, v)
    except OSError as e: print('sysctl', k, e)

L = socket.inet_aton('192.168.0.1'); R = socket.inet_aton('192.0.2.1')
def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
def pkt(sport, dport, seq, ack, flags, win, opts=b'', data=b''):
    while len(opts) % 4: opts += b'\x01'
    off = (20 + len(opts)) // 4
    th = struct.pack('!HHIIBBHHH', sport, dport, seq & 0xffffffff, ack & 0xffffffff, off << 4, flags, win, 0, 0) + opts
    ps = R + L + struct.pack('!BBH', 0, 6, len(th) + len(data))
    c = csum(ps + th + data)
    th = th[:16] + struct.pack('!H', c) + th[18:]
    tot = 20 + len(th) + len(data)
    ih = struct.pack('!BBHHHBBH4s4s', 0x45, 0, tot, 1, 0, 64, 6, 0, R, L)
    ih = ih[:10] + struct.pack('!H', csum(ih)) + ih[12:]
    return ih + th + data
def parse(b):
    ihl = (b[0] & 15) * 4
    t = b[ihl:]
    sport, dport, seq, ack, off, fl, win = struct.unpack('!HHIIBBH', t[:16])
    return seq, ack, fl, len(t) - (off >> 4) * 4
def recv(timeout):
    r, _, _ = select.select([fd], [], [], timeout)
    if not r: return None
    return time.monotonic(), os.read(fd, 65535)

ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(('192.168.0.1', 8080)); ls.listen(1)
P = 40000; irs = 0
F, S, R_, P_, A = 1, 2, 4, 8, 16
t0 = time.monotonic()
os.write(fd, pkt(P, 8080, irs, 0, S, 32792, b'\x02\x04\x03\xe8\x04\x02\x01\x01\x01\x03\x03\x07'))
while True:
    ts, b = recv(1)
    seq, ack, fl, n = parse(b)
    if fl & S: iss = seq; break
time.sleep(0.1 - (time.monotonic() - t0))
os.write(fd, pkt(P, 8080, irs + 1, iss + 1, A, 320))
c, _ = ls.accept()
t1 = time.monotonic()
NSEG = int(sys.argv[2]) if len(sys.argv) > 2 else 4
SACKED = int(sys.argv[3]) if len(sys.argv) > 3 else 4
c.send(b'x' * (1000 * NSEG))
tsend = None
while True:  # the 4 segments
    r = recv(0.05)
    if not r: break
    ts, b = r
    seq, ack, fl, n = parse(b)
    tsend = tsend or ts
time.sleep(0.1 - (time.monotonic() - t1))
sack = b'\x01\x01\x05\x0a' + struct.pack('!II', iss + 1 + 1000 * (SACKED - 1), iss + 1 + 1000 * SACKED)
tsack = time.monotonic()
os.write(fd, pkt(P, 8080, irs + 1, iss + 1, A, 320, sack))
while True:
    r = recv(1.0)
    if not r: break
    ts, b = r
    seq, ack, fl, n = parse(b)
    print('rtt %.2f ms, retx %.2f ms after SACK (seq %d)' % ((tsack - tsend) * 1e3, (ts - tsack) * 1e3, seq - iss))
    if n > 0: break

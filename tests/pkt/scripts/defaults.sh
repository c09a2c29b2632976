#!/bin/bash
# The test profile the .pkt scripts in this directory assume, so that they
# also run unchanged under google/packetdrill on a Linux kernel. `weir pkt`
# does not execute this file: it applies the same settings itself.
sysctl -q net.ipv4.tcp_rmem="4096 540000 15728640"
sysctl -q net.ipv4.tcp_wmem="4096 262144 4194304"
sysctl -q net.ipv4.tcp_timestamps=1
sysctl -q net.ipv4.tcp_syn_retries=5
sysctl -q net.ipv4.tcp_synack_retries=5
sysctl -q net.ipv4.tcp_frto=2
sysctl -q net.ipv4.tcp_sack=1
sysctl -q net.ipv4.tcp_dsack=1
sysctl -q net.ipv4.tcp_reordering=3
sysctl -q net.ipv4.tcp_congestion_control=cubic
sysctl -q net.ipv4.tcp_slow_start_after_idle=0
sysctl -q net.ipv4.tcp_early_retrans=4 net.ipv4.tcp_recovery=1
sysctl -q net.ipv4.tcp_tso_win_divisor=3
sysctl -q net.ipv4.tcp_ecn=0
sysctl -q net.ipv4.tcp_pacing_ss_ratio=200
sysctl -q net.ipv4.tcp_pacing_ca_ratio=120
sysctl -q net.ipv4.tcp_notsent_lowat=4294967295 > /dev/null 2>&1
sysctl -q net.ipv4.tcp_syncookies=1
sysctl -q net.ipv4.tcp_fastopen=0x70403
sysctl -q net.ipv4.tcp_fastopen_key=a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4
tc qdisc add dev tun0 root pfifo > /dev/null 2>&1
exit 0

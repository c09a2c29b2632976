// TCP Fast Open (RFC 7413) as Linux implements it (net/ipv4/tcp_fastopen.c):
// the net.ipv4.tcp_fastopen bits, the server key, the cookie (SipHash-2-4 of
// the SYN's source and destination addresses, 8 bytes) and the decisions a
// listener and a client take from them. Pure functions of their arguments;
// the listener and connection keep the state.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "util/siphash.h"
#include "weir/addr.h"

namespace weir::tcp::fastopen {

// net.ipv4.tcp_fastopen bits (Linux include/net/tcp.h TFO_*).
inline constexpr int kClientEnable = 0x1;         // TFO_CLIENT_ENABLE
inline constexpr int kServerEnable = 0x2;         // TFO_SERVER_ENABLE
inline constexpr int kClientNoCookie = 0x4;       // TFO_CLIENT_NO_COOKIE: data in SYN without a cookie
inline constexpr int kServerCookieNotReqd = 0x200;  // TFO_SERVER_COOKIE_NOT_REQD
inline constexpr int kServerWoSockopt = 0x400;    // TFO_SERVER_WO_SOCKOPT1: every listener

// RFC 7413 §4.1.1: 4 to 16 bytes, even; Linux's own cookies are 8
// (TCP_FASTOPEN_COOKIE_SIZE).
inline constexpr size_t kCookieMin = 4;
inline constexpr size_t kCookieMax = 16;
inline constexpr size_t kCookieSize = 8;

struct Cookie {
  std::array<uint8_t, kCookieMax> val{};
  uint8_t len = 0;
  bool operator==(const Cookie& o) const {
    if (len != o.len) return false;
    for (size_t i = 0; i < len; ++i)
      if (val[i] != o.val[i]) return false;
    return true;
  }
};

// The server keys: primary and, after a rotation, the backup still accepted
// (Linux tcp_fastopen_context).
struct Keys {
  SipKey primary;
  std::optional<SipKey> backup;
};

// Parses net.ipv4.tcp_fastopen_key's text: "p0-p1-p2-p3" and optionally
// ",b0-b1-b2-b3", each word eight hex digits at most (Linux
// proc_tcp_fastopen_key). Each word is stored little-endian, so the key's
// bytes are the words' bytes in memory order on x86, as Linux stores them.
std::optional<Keys> parse_keys(std::string_view text);
// The key as Linux derives it from sixteen raw bytes (TCP_FASTOPEN_KEY).
SipKey key_from_bytes(const uint8_t* b);

// Linux tcp_fastopen_init_key_once: with no key configured, one is drawn
// at random (get_random_bytes) on first use and kept. weir draws it from a
// splitmix64 generator seeded with the driver's seed (StackConfig::secret),
// so that a run replays exactly, without keying cookies with the seed as is.
SipKey random_key(uint64_t seed);

// Linux __tcp_fastopen_cookie_gen_cipher: SipHash over the SYN's source
// then destination address (4 bytes each for IPv4, 16 for IPv6), the hash
// written little-endian.
Cookie make_cookie(const SipKey& key, const IpAddr& syn_src, const IpAddr& syn_dst);

// Linux tcp_fastopen_cookie_gen_check: 1 when `c` is the primary key's
// cookie, 2 when the backup key's, 0 otherwise.
int check_cookie(const Keys& k, const IpAddr& syn_src, const IpAddr& syn_dst, const Cookie& c);

}  // namespace weir::tcp::fastopen

#include "weir/counters.h"
#include "wire/tcp_header.h"

namespace weir::tcp::fastopen {

// What a listener knows when a SYN arrives (Linux tcp_try_fastopen's inputs).
struct ServerSyn {
  int sysctl = 0;             // net.ipv4.tcp_fastopen
  bool no_cookie = false;     // TCP_FASTOPEN_NO_COOKIE on the listener
  bool queue_ok = false;      // tcp_fastopen_queue_check: max_qlen set and not reached
  bool syn_data = false;      // the SYN carries data
  std::optional<wire::TcpFastOpen> option;  // the SYN's Fast Open option
  IpAddr src, dst;            // the SYN's addresses
};

struct ServerDecision {
  bool child = false;  // create the socket now, with the SYN's data
  std::optional<wire::TcpFastOpen> reply;  // cookie option for the SYN-ACK
};

// Linux tcp_try_fastopen (RFC 7413 §4.2.2), counting TcpExtTCPFastOpen*.
ServerDecision server_decide(const ServerSyn& syn, const Keys& keys, Counters& c);

}  // namespace weir::tcp::fastopen

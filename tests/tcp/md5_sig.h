// struct tcp_md5sig as an application fills it for setsockopt(TCP_MD5SIG):
// an IPv4 peer, its key and, with `prefix` >= 0, TCP_MD5SIG_EXT's prefix.
#pragma once

#include <linux/tcp.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "weir/addr.h"

namespace weir::test {

inline std::vector<uint8_t> md5sig(const IpAddr& peer, std::span<const uint8_t> key, int prefix = -1) {
  tcp_md5sig cmd{};
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(peer.v4_host_order());
  std::memcpy(&cmd.tcpm_addr, &sin, sizeof sin);
  cmd.tcpm_keylen = static_cast<uint16_t>(key.size());
  if (!key.empty()) std::memcpy(cmd.tcpm_key, key.data(), std::min<size_t>(key.size(), sizeof cmd.tcpm_key));
  if (prefix >= 0) {
    cmd.tcpm_flags = TCP_MD5SIG_FLAG_PREFIX;
    cmd.tcpm_prefixlen = static_cast<uint8_t>(prefix);
  }
  std::vector<uint8_t> b(sizeof cmd);
  std::memcpy(b.data(), &cmd, sizeof cmd);
  return b;
}

}  // namespace weir::test

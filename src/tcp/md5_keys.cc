// TCP_MD5SIG keys (Linux net/ipv4/tcp_ipv4.c tcp_md5_do_add/del/lookup,
// tcp_v4_parse_md5_keys; net/ipv6/tcp_ipv6.c tcp_v6_parse_md5_keys) and the
// inbound check (tcp_inbound_md5_hash).
#include "tcp/md5_keys.h"

#include <linux/tcp.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace weir::tcp::md5 {
namespace {

// Linux ipv4_prefix_match / ipv6_prefix_equal. IPv4 keys (held mapped)
// compare the last 32 bits; a family never matches the other.
bool prefix_match(const Key& k, const IpAddr& peer) {
  if (k.addr.is_v4() != peer.is_v4()) return false;
  const size_t skip = k.addr.is_v4() ? 12 : 0;
  const uint8_t* a = k.addr.bytes().data() + skip;
  const uint8_t* b = peer.bytes().data() + skip;
  uint8_t bits = k.prefixlen;
  for (size_t i = 0; bits > 0; ++i, bits = bits > 8 ? bits - 8 : 0) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff00 >> bits);
    if ((a[i] ^ b[i]) & mask) return false;
  }
  return true;
}

bool same_key_slot(const Key& k, const IpAddr& addr, uint8_t prefixlen) {
  return k.addr == addr && k.prefixlen == prefixlen;  // tcp_md5_do_lookup_exact
}

IpAddr sockaddr_addr(const void* ss, bool v6) {
  if (!v6) {
    sockaddr_in sin{};
    std::memcpy(&sin, ss, sizeof sin);
    return IpAddr::v4(ntohl(sin.sin_addr.s_addr));
  }
  sockaddr_in6 sin6{};
  std::memcpy(&sin6, ss, sizeof sin6);
  std::array<uint8_t, 16> b{};
  std::memcpy(b.data(), &sin6.sin6_addr, 16);
  return IpAddr::v6(b);  // a v4-mapped address is an IPv4 key, as tcp_v6_parse_md5_keys makes it
}

}  // namespace

Errc KeyList::add(const IpAddr& addr, uint8_t prefixlen, std::span<const uint8_t> key) {
  auto it = std::find_if(keys_.begin(), keys_.end(), [&](const Key& k) { return same_key_slot(k, addr, prefixlen); });
  if (it == keys_.end()) {
    if (keys_.size() >= kMaxKeys) return Errc::kNoMem;
    it = keys_.insert(keys_.end(), Key{addr, prefixlen, 0, {}});
  }
  it->keylen = static_cast<uint8_t>(key.size());
  std::copy(key.begin(), key.end(), it->key.begin());
  return Errc::kOk;
}

Errc KeyList::del(const IpAddr& addr, uint8_t prefixlen) {
  auto it = std::find_if(keys_.begin(), keys_.end(), [&](const Key& k) { return same_key_slot(k, addr, prefixlen); });
  if (it == keys_.end()) return Errc::kNoEnt;
  keys_.erase(it);
  return Errc::kOk;
}

// __tcp_md5_do_lookup: among the keys whose prefix covers the peer, the
// longest prefix wins (better_md5_match).
const Key* KeyList::lookup(const IpAddr& peer) const {
  const Key* best = nullptr;
  for (const Key& k : keys_)
    if (prefix_match(k, peer) && (!best || k.prefixlen > best->prefixlen)) best = &k;
  return best;
}

Expected<SockoptCmd, Errc> parse_sockopt(int name, bool v6_socket, std::span<const uint8_t> val) {
  tcp_md5sig cmd{};
  if (val.size() < sizeof cmd) return Unexpected{Errc::kInval};  // "optlen < sizeof(cmd)"
  std::memcpy(&cmd, val.data(), sizeof cmd);
  if (cmd.tcpm_addr.ss_family != (v6_socket ? AF_INET6 : AF_INET)) return Unexpected{Errc::kInval};
  SockoptCmd c;
  c.addr = sockaddr_addr(&cmd.tcpm_addr, v6_socket);
  const uint8_t max_prefix = c.addr.is_v4() ? 32 : 128;  // a v4-mapped key is an IPv4 key
  c.prefixlen = max_prefix;
  if (name == TCP_MD5SIG_EXT && (cmd.tcpm_flags & TCP_MD5SIG_FLAG_PREFIX)) {
    c.prefixlen = cmd.tcpm_prefixlen;
    if (c.prefixlen > max_prefix) return Unexpected{Errc::kInval};
  }
  // A VRF scope needs an L3 master device: this stack has none.
  if (name == TCP_MD5SIG_EXT && cmd.tcpm_ifindex && (cmd.tcpm_flags & TCP_MD5SIG_FLAG_IFINDEX))
    return Unexpected{Errc::kInval};
  if (cmd.tcpm_keylen > TCP_MD5SIG_MAXKEYLEN) return Unexpected{Errc::kInval};
  c.key = val.subspan(offsetof(tcp_md5sig, tcpm_key), cmd.tcpm_keylen);
  return c;
}

Errc apply_sockopt(KeyList& keys, int name, bool v6_socket, std::span<const uint8_t> val) {
  auto c = parse_sockopt(name, v6_socket, val);
  if (!c) return c.error();
  if (c->key.empty()) return keys.del(c->addr, c->prefixlen);  // "if (!cmd.tcpm_keylen)"
  return keys.add(c->addr, c->prefixlen, c->key);
}

bool digest_matches(const Key& k, const wire::TcpPacket& p) {
  if (!p.tcp.options.md5) return false;
  const size_t seg_len = size_t{p.tcp.data_offset} * 4 + p.payload.size();
  const wire::Md5Digest d = wire::tcp_md5_digest(p.ip.src, p.ip.dst, p.ip.version == 4, p.tcp,
                                                 p.tcp.data_offset, seg_len, wire::PayloadView(p.payload),
                                                 k.bytes());
  return d == *p.tcp.options.md5;
}

// tcp_inbound_hash / tcp_inbound_md5_hash, in their order.
Verdict check(const KeyList* keys, const wire::TcpPacket& p) {
  const Key* k = keys ? keys->lookup(p.ip.src) : nullptr;
  const bool has_option = p.tcp.options.md5.has_value();
  if (!k && !has_option) return Verdict::kOk;
  if (!has_option) return Verdict::kNotFound;
  if (!k) return Verdict::kUnexpected;
  return digest_matches(*k, p) ? Verdict::kOk : Verdict::kFailure;
}

}  // namespace weir::tcp::md5

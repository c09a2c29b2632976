// RFC 2385 TCP MD5 keys of one socket, set with Linux's TCP_MD5SIG and
// TCP_MD5SIG_EXT (tcp_v4_parse_md5_keys / tcp_v6_parse_md5_keys), looked up
// by peer address with the longest matching prefix (__tcp_md5_do_lookup),
// and the inbound check of tcp_inbound_md5_hash.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "weir/addr.h"
#include "weir/errors.h"
#include "wire/packet.h"
#include "wire/tcp_md5.h"

namespace weir::tcp::md5 {

struct Key {
  IpAddr addr;            // as given (Linux keeps it unmasked; exact matches compare it whole)
  uint8_t prefixlen = 0;  // 32 or 128 unless TCP_MD5SIG_FLAG_PREFIX says otherwise
  uint8_t keylen = 0;
  std::array<uint8_t, wire::kMd5MaxKeyLen> key{};
  std::span<const uint8_t> bytes() const { return {key.data(), keylen}; }
};

// Linux charges each key to the socket's optmem (sock_kmalloc of a
// tcp_md5sig_key, about 128 bytes, under net.core.optmem_max = 20480 on the
// kernels this follows): some 150 keys. A round bound of the same size.
inline constexpr size_t kMaxKeys = 128;

class KeyList {
 public:
  // tcp_md5_do_add: a key for the same address and prefix is replaced in
  // place; a new one past the bound fails with ENOMEM (sock_kmalloc).
  Errc add(const IpAddr& addr, uint8_t prefixlen, std::span<const uint8_t> key);
  // tcp_md5_do_del: ENOENT when no key has exactly this address and prefix.
  Errc del(const IpAddr& addr, uint8_t prefixlen);
  // The key for `peer` with the longest prefix of its family, or null.
  const Key* lookup(const IpAddr& peer) const;
  bool empty() const { return keys_.empty(); }
  size_t size() const { return keys_.size(); }

 private:
  std::vector<Key> keys_;
};

// A parsed struct tcp_md5sig: keylen 0 asks to delete.
struct SockoptCmd {
  IpAddr addr;
  uint8_t prefixlen = 0;
  std::span<const uint8_t> key;
};
// Linux tcp_v4_parse_md5_keys / tcp_v6_parse_md5_keys: EINVAL for a short
// option, a family the socket does not speak, a prefix too long, an
// interface scope (no L3 master devices here), or a key over 80 bytes.
Expected<SockoptCmd, Errc> parse_sockopt(int name, bool v6_socket, std::span<const uint8_t> val);
// parse_sockopt then add or delete.
Errc apply_sockopt(KeyList& keys, int name, bool v6_socket, std::span<const uint8_t> val);

// Linux tcp_inbound_hash -> tcp_inbound_md5_hash: what to do with a segment.
enum class Verdict : uint8_t {
  kOk,          // no key and no option, or a matching digest
  kNotFound,    // a key for the peer, no option: TcpExtTCPMD5NotFound
  kUnexpected,  // an option, no key for the peer: TcpExtTCPMD5Unexpected
  kFailure,     // the digest does not match: TcpExtTCPMD5Failure
};
Verdict check(const KeyList* keys, const wire::TcpPacket& p);
// True when the digest `p` carries is the one `k` gives.
bool digest_matches(const Key& k, const wire::TcpPacket& p);

}  // namespace weir::tcp::md5

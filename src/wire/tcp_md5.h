// RFC 2385 TCP MD5 signatures: the digest of one segment. The hash itself is
// nettle's MD5; this file only decides which bytes go into it.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "weir/addr.h"
#include "wire/packet.h"
#include "wire/tcp_header.h"

namespace weir::wire {

using Md5Digest = std::array<uint8_t, 16>;

// Option bytes an MD5 signature takes in Linux's layout (TCPOLEN_MD5SIG_ALIGNED:
// NOP NOP 19 18 + 16-byte digest).
inline constexpr uint32_t kMd5OptionAligned = 20;
inline constexpr size_t kMd5MaxKeyLen = 80;  // TCP_MD5SIG_MAXKEYLEN

// RFC 2385 §2.0: MD5 over (1) the pseudo-header, (2) the TCP header without
// options with a zero checksum, (3) the payload, (4) the key. `v4` selects
// the RFC 793 pseudo-header (src, dst, zero, PTCL, TCP length); otherwise
// Linux tcp_v6_md5_hash_headers uses RFC 8200 §8.1's (src, dst, 32-bit
// length, 32-bit next header). `seg_len` is the TCP length, options included;
// `h.data_offset` is taken from `doff` (words), since the header may not
// have been emitted yet.
Md5Digest tcp_md5_digest(const IpAddr& src, const IpAddr& dst, bool v4, const TcpHeader& h, uint8_t doff,
                         size_t seg_len, PayloadView payload, std::span<const uint8_t> key);

// Where a built TCP header's MD5 digest lives: the offset of the 16 bytes
// from the header's start, or 0 when no kind 19 length 18 option is there.
size_t md5_digest_offset(std::span<const uint8_t> tcp_header);

}  // namespace weir::wire

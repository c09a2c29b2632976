// TCP header and option parsing (RFC 9293 §3.1, RFC 7323 §2.2/§3.2,
// RFC 2018 §2/§3). Every read is preceded by a length check against the
// header; no option can make the parser look outside `seg`.
#include <cstring>

#include "wire/bytes.h"
#include "wire/tcp_header.h"

namespace weir::wire {
namespace {

// Required total length (kind and length bytes included) of a known option,
// or 0 when the kind has no fixed length. RFC 9293 §3.2 (MSS), RFC 7323 §2.2
// (WS) and §3.2 (TS), RFC 2018 §2 (SACK-permitted).
constexpr uint8_t fixed_len(uint8_t kind) {
  switch (kind) {
    case tcp_opt::MSS: return 4;
    case tcp_opt::WSCALE: return 3;
    case tcp_opt::SACK_PERMITTED: return 2;
    case tcp_opt::TIMESTAMP: return 10;
    default: return 0;
  }
}

bool length_ok(uint8_t kind, uint8_t len) {
  if (len < 2) return false;  // zero/one length would loop or underflow
  if (uint8_t want = fixed_len(kind)) return len == want;
  if (kind == tcp_opt::SACK) {
    // RFC 2018 §3: 2 + 8n bytes with at least one block.
    return len >= 10 && (len - 2) % 8 == 0;
  }
  return true;
}

// RFC 7413 §4.1.1: an even cookie length of 4 to 16 bytes, or none (a
// request). Linux tcp_parse_fastopen_option ignores an odd length and marks
// any other even one invalid (-1).
void take_fastopen(TcpOptions& o, const uint8_t* cookie, int len, bool exp) {
  if (len & 1) return;
  TcpFastOpen fo;
  fo.exp = exp;
  if (len >= 4 && len <= 16) {
    for (int i = 0; i < len; ++i) fo.cookie[i] = cookie[i];
    fo.len = static_cast<int8_t>(len);
  } else {
    fo.len = len == 0 ? 0 : -1;
  }
  o.fastopen = fo;
}

// Stores a known option's value. `p` points at the kind byte; its length has
// already been validated by length_ok.
void take_value(TcpOptions& o, const uint8_t* p, uint8_t len) {
  switch (p[0]) {
    case tcp_opt::MSS: o.mss = load_be16(p + 2); break;
    case tcp_opt::WSCALE: o.wscale = p[2]; break;  // > 14 is clamped by the engine (RFC 7323 §2.3)
    case tcp_opt::SACK_PERMITTED: o.sack_permitted = true; break;
    case tcp_opt::TIMESTAMP: o.ts = TcpTimestamps{load_be32(p + 2), load_be32(p + 6)}; break;
    case tcp_opt::SACK:
      // Blocks past the fourth cannot fit in 40 bytes; add_sack ignores them anyway.
      for (uint8_t i = 2; i + 8 <= len; i += 8)
        o.add_sack(SeqRange{Seq32(load_be32(p + i)), Seq32(load_be32(p + i + 4))});
      break;
    case tcp_opt::FASTOPEN: take_fastopen(o, p + 2, len - 2, false); break;
    case tcp_opt::MD5:
      // Linux tcp_parse_md5sig_option: the first kind 19 decides; only
      // length 18 (RFC 2385 §3.0) carries a digest.
      if (!o.md5 && len == 18) {
        std::array<uint8_t, 16> d{};
        std::memcpy(d.data(), p + 2, 16);
        o.md5 = d;
      }
      break;
    case tcp_opt::EXP:
      // RFC 6994 §3: an experiment is named by its magic; only Fast Open's is known.
      if (len >= 4 && load_be16(p + 2) == kFastOpenExpMagic) take_fastopen(o, p + 4, len - 4, true);
      break;
    default: break;  // unknown kinds stay raw
  }
}

// Returns the first error, or nothing when every option is well formed.
std::optional<TcpParseError> parse_options(std::span<const uint8_t> opt, TcpOptions& o) {
  o.raw_len = static_cast<uint8_t>(opt.size());
  if (!opt.empty()) std::memcpy(o.raw.data(), opt.data(), opt.size());  // <= 40: hlen is at most 60
  size_t i = 0;
  while (i < opt.size()) {
    uint8_t kind = opt[i];
    if (kind == tcp_opt::EOL || kind == tcp_opt::NOP) {
      o.items[o.item_count++] = TcpOptionItem{kind, static_cast<uint8_t>(i), 1};
      ++i;
      if (kind == tcp_opt::EOL) break;  // RFC 9293 §3.2: the rest is padding
      continue;
    }
    if (i + 1 >= opt.size()) return TcpParseError::kOptionOverrun;
    uint8_t len = opt[i + 1];
    if (len < 2) return TcpParseError::kOptionBadLength;
    if (i + len > opt.size()) return TcpParseError::kOptionOverrun;
    if (!length_ok(kind, len)) return TcpParseError::kOptionBadLength;
    take_value(o, opt.data() + i, len);
    o.items[o.item_count++] = TcpOptionItem{kind, static_cast<uint8_t>(i), len};
    i += len;
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(TcpParseError e) {
  switch (e) {
    case TcpParseError::kTruncated: return "truncated";
    case TcpParseError::kBadDataOffset: return "bad data offset";
    case TcpParseError::kOptionOverrun: return "option overruns header";
    case TcpParseError::kOptionBadLength: return "option has bad length";
    case TcpParseError::kTooManySackBlocks: return "too many SACK blocks";
  }
  return "?";
}

std::optional<TcpParseError> parse_tcp_into(std::span<const uint8_t> seg, TcpHeader& h) {
  if (seg.size() < kTcpHeaderMin) return TcpParseError::kTruncated;
  const uint8_t* p = seg.data();
  h.data_offset = p[12] >> 4;
  // RFC 9293 §3.1: data offset counts 32-bit words, at least 5.
  if (h.data_offset < 5) return TcpParseError::kBadDataOffset;
  size_t hlen = size_t{h.data_offset} * 4;
  if (hlen > seg.size()) return TcpParseError::kTruncated;
  h.src_port = load_be16(p);
  h.dst_port = load_be16(p + 2);
  h.seq = Seq32(load_be32(p + 4));
  h.ack = Seq32(load_be32(p + 8));
  h.flags = p[13];
  h.window = load_be16(p + 14);
  h.checksum = load_be16(p + 16);
  h.urgent = load_be16(p + 18);
  return parse_options(seg.subspan(kTcpHeaderMin, hlen - kTcpHeaderMin), h.options);
}

Expected<TcpHeader, TcpParseError> parse_tcp(std::span<const uint8_t> seg) {
  TcpHeader h;
  if (auto err = parse_tcp_into(seg, h)) return Unexpected{*err};
  return h;
}

}  // namespace weir::wire

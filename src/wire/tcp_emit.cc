// TCP header and option emission. Two layouts: Linux's (tcp_options_write in
// net/ipv4/tcp_output.c) when TcpOptions::items is empty, and the caller's
// exact item order otherwise (the packetdrill runner sends script packets
// byte for byte that way). Both run through one writer so that
// options_wire_len and emit_tcp can never disagree.
#include <algorithm>
#include <cstring>

#include "wire/bytes.h"
#include "wire/tcp_header.h"
#include "wire/tcp_options_layout.h"

namespace weir::wire {
namespace {

// Appends option bytes to a 40-byte area; with `out == nullptr` it only counts.
class OptWriter {
 public:
  explicit OptWriter(uint8_t* out) : out_(out) {}
  size_t used() const { return n_; }
  size_t room() const { return kTcpOptionsMax - n_; }

  void byte(uint8_t b) {
    if (out_) out_[n_] = b;
    ++n_;
  }
  void be16(uint16_t v) {
    if (out_) store_be16(out_ + n_, v);
    n_ += 2;
  }
  void be32(uint32_t v) {
    if (out_) store_be32(out_ + n_, v);
    n_ += 4;
  }
  void bytes(const uint8_t* p, size_t len) {
    if (out_) std::memcpy(out_ + n_, p, len);
    n_ += len;
  }
  void kind_len(uint8_t kind, uint8_t len) { byte(kind); byte(len); }
  void nops(int k) { for (int i = 0; i < k; ++i) byte(tcp_opt::NOP); }
  void pad_to_word() { while (n_ % 4 != 0) byte(tcp_opt::EOL); }

  void mss(uint16_t v) { kind_len(tcp_opt::MSS, 4); be16(v); }
  void wscale(uint8_t v) { kind_len(tcp_opt::WSCALE, 3); byte(v); }
  void sack_permitted() { kind_len(tcp_opt::SACK_PERMITTED, 2); }
  void timestamps(const TcpTimestamps& ts) {
    kind_len(tcp_opt::TIMESTAMP, 10);
    be32(ts.val);
    be32(ts.ecr);
  }
  // RFC 7413 §4.1.1 (kind 34) or the experimental form (kind 254, magic
  // 0xF989); Linux tcp_options_write pads a length of 4n+2 with NOP NOP.
  void fastopen(const TcpFastOpen& fo) {
    const uint8_t n = static_cast<uint8_t>(fo.len);
    const uint8_t len = static_cast<uint8_t>((fo.exp ? 4 : 2) + n);
    if (room() < len + 2u) return;
    kind_len(fo.exp ? tcp_opt::EXP : tcp_opt::FASTOPEN, len);
    if (fo.exp) be16(kFastOpenExpMagic);
    bytes(fo.cookie.data(), n);
    if ((len & 3) == 2) nops(2);
  }
  // RFC 2385 §3.0 as Linux tcp_options_write aligns it: NOP NOP 19 18.
  void md5(const std::array<uint8_t, 16>& d) {
    nops(2);
    kind_len(tcp_opt::MD5, 18);
    bytes(d.data(), d.size());
  }
  void sack(const TcpOptions& o, size_t count) {
    kind_len(tcp_opt::SACK, static_cast<uint8_t>(2 + 8 * count));
    for (size_t i = 0; i < count; ++i) {
      be32(o.sack[i].begin.raw());
      be32(o.sack[i].end.raw());
    }
  }

 private:
  uint8_t* out_;
  size_t n_ = 0;
};

// Linux's tcp_options_write order: MD5 (NOP NOP aligned, first); MSS; TS (preceded by SACK-permitted if
// both, else by NOP NOP); NOP NOP SACK-permitted when no TS; NOP WS;
// NOP NOP SACK blocks, as many as still fit (tcp_established_options).
void write_linux_layout(const TcpOptions& o, OptWriter& w) {
  if (o.md5) w.md5(*o.md5);
  if (o.mss) w.mss(*o.mss);
  if (o.ts) {
    if (o.sack_permitted) w.sack_permitted();
    else w.nops(2);
    w.timestamps(*o.ts);
  }
  if (o.sack_permitted && !o.ts) {
    w.nops(2);
    w.sack_permitted();
  }
  if (o.wscale) {
    w.nops(1);
    w.wscale(*o.wscale);
  }
  if (o.sack_count > 0 && w.room() >= 4 + 8) {
    size_t n = std::min<size_t>(o.sack_count, (w.room() - 4) / 8);
    w.nops(2);
    w.sack(o, n);
  }
  if (o.fastopen && o.fastopen->len >= 0) w.fastopen(*o.fastopen);
}

// Length one item takes when written by write_item.
size_t item_len(const TcpOptions& o, const TcpOptionItem& it) {
  switch (it.kind) {
    case tcp_opt::EOL:
    case tcp_opt::NOP: return 1;
    case tcp_opt::MSS: if (o.mss) return 4; break;
    case tcp_opt::WSCALE: if (o.wscale) return 3; break;
    case tcp_opt::SACK_PERMITTED: return 2;
    case tcp_opt::TIMESTAMP: if (o.ts) return 10; break;
    case tcp_opt::SACK: if (o.sack_count > 0) return 2 + 8 * size_t{o.sack_count}; break;
    default: break;
  }
  // Raw bytes; an item pointing outside `raw` cannot be written.
  if (it.len == 0 || size_t{it.offset} + it.len > o.raw_len) return 0;
  return it.len;
}

// Known kinds take their value from the parsed fields (so a caller can edit
// them); a known kind without a value and every unknown kind use raw bytes.
void write_item(const TcpOptions& o, const TcpOptionItem& it, OptWriter& w) {
  switch (it.kind) {
    case tcp_opt::EOL:
    case tcp_opt::NOP: w.byte(it.kind); return;
    case tcp_opt::MSS: if (o.mss) return w.mss(*o.mss); break;
    case tcp_opt::WSCALE: if (o.wscale) return w.wscale(*o.wscale); break;
    case tcp_opt::SACK_PERMITTED: return w.sack_permitted();
    case tcp_opt::TIMESTAMP: if (o.ts) return w.timestamps(*o.ts); break;
    case tcp_opt::SACK: if (o.sack_count > 0) return w.sack(o, o.sack_count); break;
    default: break;
  }
  w.bytes(o.raw.data() + it.offset, it.len);
}

// Items that would overflow the 40-byte option space are dropped, as is any
// item that cannot be written; the rest keep their order.
void write_items(const TcpOptions& o, OptWriter& w) {
  size_t count = std::min<size_t>(o.item_count, kTcpOptionsMax);
  // Every parsed SACK block goes out with the first SACK item; a header that
  // carried several SACK options must not repeat the blocks (and crowd out
  // the options after them).
  bool sack_written = false;
  for (size_t i = 0; i < count; ++i) {
    if (o.items[i].kind == tcp_opt::SACK && o.sack_count > 0) {
      if (sack_written) continue;
      sack_written = true;
    }
    size_t len = item_len(o, o.items[i]);
    if (len == 0 || len > w.room()) continue;
    write_item(o, o.items[i], w);
  }
}

}  // namespace

size_t write_options(const TcpOptions& o, uint8_t* out, bool pad) {
  if (no_options(o)) return 0;
  OptWriter w(out);
  if (o.item_count == 0) write_linux_layout(o, w);
  else write_items(o, w);
  // RFC 9293 §3.1: the header ends on a 32-bit boundary; pad with zeros.
  if (pad) w.pad_to_word();
  return w.used();
}

size_t options_wire_len(const TcpOptions& o) { return write_options(o, nullptr, true); }

size_t emit_tcp(const TcpHeader& h, std::span<uint8_t> out) {
  uint8_t* p = out.data();
  size_t hlen = 0;
  if (out.size() >= kTcpHeaderMin + kTcpOptionsMax) {
    // Room for any options: write them and learn their length in one pass.
    hlen = kTcpHeaderMin + (no_options(h.options) ? 0 : write_options(h.options, p + kTcpHeaderMin, true));
  } else {
    hlen = kTcpHeaderMin + options_wire_len(h.options);
    if (out.size() < hlen) return 0;
    write_options(h.options, p + kTcpHeaderMin, true);
  }
  store_tcp_fixed(p, h, hlen);
  store_be16(p + 16, 0);  // the checksum, filled in by the caller
  return hlen;
}

}  // namespace weir::wire

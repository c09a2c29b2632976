// TCP header and options as values (RFC 9293 §3.1, RFC 7323, RFC 2018).
// Parsing lives in tcp_parse.cc (checked views, typed errors); emitting in
// tcp_emit.cc (exactly-sized buffers). No allocation: options fit in 40 bytes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "weir/expected.h"
#include "weir/seq.h"

namespace weir::wire {

namespace tcp_flag {
inline constexpr uint8_t FIN = 0x01;
inline constexpr uint8_t SYN = 0x02;
inline constexpr uint8_t RST = 0x04;
inline constexpr uint8_t PSH = 0x08;
inline constexpr uint8_t ACK = 0x10;
inline constexpr uint8_t URG = 0x20;
inline constexpr uint8_t ECE = 0x40;
inline constexpr uint8_t CWR = 0x80;
}  // namespace tcp_flag

// Option kinds (IANA "TCP Option Kind Numbers").
namespace tcp_opt {
inline constexpr uint8_t EOL = 0;
inline constexpr uint8_t NOP = 1;
inline constexpr uint8_t MSS = 2;
inline constexpr uint8_t WSCALE = 3;
inline constexpr uint8_t SACK_PERMITTED = 4;
inline constexpr uint8_t SACK = 5;
inline constexpr uint8_t TIMESTAMP = 8;
inline constexpr uint8_t MD5 = 19;
inline constexpr uint8_t FASTOPEN = 34;
inline constexpr uint8_t ACCECN0 = 172;
inline constexpr uint8_t ACCECN1 = 174;
inline constexpr uint8_t EXP = 254;  // experimental; Fast Open used it before kind 34
}  // namespace tcp_opt

inline constexpr size_t kTcpHeaderMin = 20;
inline constexpr size_t kTcpOptionsMax = 40;
inline constexpr size_t kMaxSackBlocks = 4;

struct TcpTimestamps {
  uint32_t val = 0;  // TSval
  uint32_t ecr = 0;  // TSecr
  bool operator==(const TcpTimestamps&) const = default;
};

// RFC 7413 §4.1.1 Fast Open option: kind 34, or the experimental kind 254
// with magic 0xF989 (`exp`) that Linux still understands and echoes. `len`
// is the cookie's length: 0 is a cookie request, 4..16 (even) a cookie, -1
// a length Linux ignores (tcp_parse_fastopen_option).
inline constexpr uint16_t kFastOpenExpMagic = 0xF989;
struct TcpFastOpen {
  std::array<uint8_t, 16> cookie{};
  int8_t len = 0;
  bool exp = false;
};

// One option in wire order. Known options carry their value in the parsed
// fields of TcpOptions; `offset`/`len` locate the raw bytes (kind and length
// included) in TcpOptions::raw so unknown kinds can be printed and matched.
struct TcpOptionItem {
  uint8_t kind = 0;
  uint8_t offset = 0;
  uint8_t len = 0;  // 1 for EOL and NOP
};

struct TcpOptions {
  std::optional<uint16_t> mss;
  std::optional<uint8_t> wscale;
  bool sack_permitted = false;
  std::optional<TcpTimestamps> ts;
  std::array<SeqRange, kMaxSackBlocks> sack{};
  uint8_t sack_count = 0;
  std::optional<TcpFastOpen> fastopen;
  // RFC 2385 §3.0: the 16-byte digest of a kind 19, length 18 option (Linux
  // tcp_parse_md5sig_option ignores any other length). On emit, Linux's
  // layout writes it first as NOP NOP 19 18 (tcp_options_write).
  std::optional<std::array<uint8_t, 16>> md5;

  // Wire order of every option (NOP and EOL included), and their raw bytes.
  // When emitting, an empty `items` list means "use Linux's layout".
  std::array<TcpOptionItem, kTcpOptionsMax> items{};
  uint8_t item_count = 0;
  std::array<uint8_t, kTcpOptionsMax> raw{};
  uint8_t raw_len = 0;

  void add_sack(SeqRange r) {
    if (sack_count < kMaxSackBlocks) sack[sack_count++] = r;
  }
};

struct TcpHeader {
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  Seq32 seq;
  Seq32 ack;
  uint8_t data_offset = 5;  // in 32-bit words; computed on emit
  uint8_t flags = 0;
  uint16_t window = 0;  // raw field, unscaled
  uint16_t checksum = 0;
  uint16_t urgent = 0;
  TcpOptions options;
  // RFC 2385: a non-empty key makes the packet builder fill options.md5 with
  // the segment's digest (wire/tcp_md5.h). Not owned; outlives the build.
  std::span<const uint8_t> md5_key;

  bool has(uint8_t flag) const { return (flags & flag) != 0; }
};

enum class TcpParseError {
  kTruncated,          // fewer than 20 bytes, or fewer than data_offset*4
  kBadDataOffset,      // data offset under 5
  kOptionOverrun,      // an option's length runs past the header
  kOptionBadLength,    // zero/one length, or a known option with the wrong length
  kTooManySackBlocks,  // (not an error on the wire; kept for completeness)
};
const char* to_string(TcpParseError e);

// Parses a TCP header (with options) from the start of `seg`; the payload is
// seg.subspan(header.data_offset * 4). Never reads outside `seg`.
Expected<TcpHeader, TcpParseError> parse_tcp(std::span<const uint8_t> seg);
// The same into a default-constructed `h` (no copy of the header on the
// way out); returns the first error, if any.
std::optional<TcpParseError> parse_tcp_into(std::span<const uint8_t> seg, TcpHeader& h);

// Bytes the options take on the wire, padded to a multiple of 4.
size_t options_wire_len(const TcpOptions& o);

// Writes header + options into `out` (which must hold at least
// 20 + options_wire_len bytes); returns bytes written. Checksum left 0; the
// caller fills it with the pseudo-header sum (see checksum.h).
size_t emit_tcp(const TcpHeader& h, std::span<uint8_t> out);

// packetdrill-style rendering: "S. 0:0(0) ack 1 win 65535 <mss 1460,...>".
std::string format_options(const TcpOptions& o);
std::string format_flags(uint8_t flags);

}  // namespace weir::wire

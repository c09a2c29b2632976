// packetdrill-syntax rendering of TCP flags and options, as packetdrill
// prints them in its "expected ... but got ..." messages: flags "S.", "P.",
// options "<mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 7>".
#include <array>

#include <fmt/format.h>

#include "wire/bytes.h"
#include "wire/tcp_header.h"
#include "wire/tcp_options_layout.h"

namespace weir::wire {
namespace {

void append_hex(std::string& s, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", p[i]);
}

// Renders one option whose bytes (kind, length, value) are p[0..len).
void append_option(std::string& s, const uint8_t* p, size_t len) {
  switch (p[0]) {
    case tcp_opt::EOL: s += "eol"; return;
    case tcp_opt::NOP: s += "nop"; return;
    case tcp_opt::MSS: s += fmt::format("mss {}", load_be16(p + 2)); return;
    case tcp_opt::WSCALE: s += fmt::format("wscale {}", p[2]); return;
    case tcp_opt::SACK_PERMITTED: s += "sackOK"; return;
    case tcp_opt::TIMESTAMP:
      s += fmt::format("TS val {} ecr {}", load_be32(p + 2), load_be32(p + 6));
      return;
    case tcp_opt::SACK:
      s += "sack";
      for (size_t i = 2; i + 8 <= len; i += 8)
        s += fmt::format(" {}:{}", load_be32(p + i), load_be32(p + i + 4));
      return;
    case tcp_opt::FASTOPEN:
      s += "FO";
      if (len > 2) { s += ' '; append_hex(s, p + 2, len - 2); }
      return;
    case tcp_opt::MD5:  // packetdrill's spelling: md5 <hex digest>
      s += "md5";
      if (len > 2) { s += ' '; append_hex(s, p + 2, len - 2); }
      return;
    case tcp_opt::EXP:
      if (len >= 4 && load_be16(p + 2) == kFastOpenExpMagic) {
        s += "FOEXP";
        if (len > 4) { s += ' '; append_hex(s, p + 4, len - 4); }
        return;
      }
      break;
    default: break;
  }
  s += fmt::format("kind {} len {}", p[0], len);
  if (len > 2) { s += ' '; append_hex(s, p + 2, len - 2); }
}

// Length of the option at p[0..avail), or 0 when its length field is unusable.
size_t option_len(const uint8_t* p, size_t avail) {
  if (p[0] == tcp_opt::EOL || p[0] == tcp_opt::NOP) return 1;
  if (avail < 2 || p[1] < 2 || p[1] > avail) return 0;
  // Fixed-length kinds render from fixed offsets; insist on the right size.
  size_t want = p[0] == tcp_opt::MSS ? 4 : p[0] == tcp_opt::WSCALE ? 3
              : p[0] == tcp_opt::TIMESTAMP ? 10 : 0;
  if (want != 0 && p[1] != want) return 0;
  return p[1];
}

}  // namespace

std::string format_options(const TcpOptions& o) {
  std::array<uint8_t, kTcpOptionsMax> buf{};
  size_t n = write_options(o, buf.data(), /*pad=*/false);
  if (n == 0) return {};
  std::string s = "<";
  for (size_t i = 0; i < n;) {
    if (i > 0) s += ',';
    size_t len = option_len(buf.data() + i, n - i);
    if (len == 0) {
      s += fmt::format("kind {} (malformed)", buf[i]);
      break;
    }
    append_option(s, buf.data() + i, len);
    i += len;
  }
  s += '>';
  return s;
}

std::string format_flags(uint8_t flags) {
  // packetdrill's order and letters; '.' is ACK, 'W' is CWR.
  static constexpr std::array<std::pair<uint8_t, char>, 8> kLetters{{
      {tcp_flag::FIN, 'F'}, {tcp_flag::SYN, 'S'}, {tcp_flag::RST, 'R'}, {tcp_flag::PSH, 'P'},
      {tcp_flag::ACK, '.'}, {tcp_flag::URG, 'U'}, {tcp_flag::ECE, 'E'}, {tcp_flag::CWR, 'W'},
  }};
  std::string s;
  for (auto [bit, c] : kLetters)
    if (flags & bit) s += c;
  return s;
}

}  // namespace weir::wire

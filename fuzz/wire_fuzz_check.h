// The body of the wire fuzz target, shared with the corpus replay test
// (tests/wire/corpus_replay_test.cc) so every build checks the seed corpus.
// Whatever the input: the parsers return (value or typed error) without
// reading out of bounds, and anything that parses re-emits to bytes that
// parse back to the same values.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "wire/packet.h"
#include "wire/tcp_header.h"

namespace weir::wire::fuzz {

inline void require(bool ok) {
  if (!ok) std::abort();
}

inline void check_tcp_roundtrip(const TcpHeader& h) {
  std::vector<uint8_t> out(kTcpHeaderMin + options_wire_len(h.options));
  require(emit_tcp(h, out) == out.size());
  auto again = parse_tcp(out);
  require(again.has_value());
  require(again->seq == h.seq && again->ack == h.ack && again->flags == h.flags);
  require(again->options.mss == h.options.mss && again->options.ts == h.options.ts);
  require(again->options.wscale == h.options.wscale);
  require(again->options.sack_permitted == h.options.sack_permitted);
  (void)format_options(h.options);
  (void)format_flags(h.flags);
}

// Returns how many of the parsers accepted the input (for the replay test).
inline int check_wire_input(std::span<const uint8_t> data) {
  int accepted = 0;
  if (auto h = parse_tcp(data)) {
    ++accepted;
    require(size_t{h->data_offset} * 4 <= data.size());
    check_tcp_roundtrip(*h);
  }
  for (bool verify : {false, true}) {
    if (auto p = parse_tcp_packet(data, verify)) {
      ++accepted;
      require(p->payload.data() >= data.data());
      require(p->payload.data() + p->payload.size() <= data.data() + data.size());
      check_tcp_roundtrip(p->tcp);
      // Rebuilding the datagram from the parsed values must parse again.
      // (Only a v6 datagram with v4-mapped addresses near 64 KiB cannot be:
      // it is rebuilt as IPv4, whose total length field is 16 bits.)
      auto rebuilt = build_tcp_packet(p->ip, p->tcp, p->payload);
      if (!rebuilt.empty()) require(parse_tcp_packet(rebuilt).has_value());
      else require(tcp_packet_size(p->ip, p->tcp, p->payload.size()) > 0xffff);
    }
  }
  if (auto e = parse_icmp_error(data)) {
    ++accepted;
    require(e->quoted_ip.version == e->ip.version);
  }
  return accepted;
}

}  // namespace weir::wire::fuzz

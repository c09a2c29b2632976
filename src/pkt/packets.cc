// Packets: inbound script packets built byte for byte (options in script
// order), outbound packets captured from the Netif and matched field by
// field in script space (packetdrill run_packet.c: sequence numbers relative
// to each side's ISN, TS ecr remapped to the live TS val it echoes).
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "pkt/runner_impl.h"
#include "wire/bytes.h"
#include "wire/checksum.h"

namespace weir::pkt {
namespace {

using K = OptionSpec::Kind;

// A packet rendered in packetdrill syntax, field by field, so that the
// first differing field can be marked with a caret.
struct Rendered {
  std::vector<std::pair<std::string, std::string>> fields;  // (name, text)
  std::string text() const {
    std::string s;
    for (const auto& f : fields) s += (s.empty() ? "" : " ") + f.second;
    return s;
  }
  size_t offset_of(const std::string& name) const {
    size_t off = 0;
    for (const auto& f : fields) {
      if (f.first == name) return off;
      off += f.second.size() + 1;
    }
    return off;
  }
};

std::string option_text(const OptionSpec& o) {
  switch (o.kind) {
    case K::kNop: return "nop";
    case K::kEol: return "eol";
    case K::kMss: return fmt::format("mss {}", o.a);
    case K::kWscale: return fmt::format("wscale {}", o.a);
    case K::kSackOk: return "sackOK";
    case K::kSack: {
      std::string s = "sack";
      for (auto [a, b] : o.blocks) s += fmt::format(" {}:{}", a, b);
      return s;
    }
    case K::kTimestamp: return fmt::format("TS val {} ecr {}", o.a, o.b);
    case K::kFastOpen: return o.text.empty() ? "FO" : "FO " + o.text;
    case K::kFastOpenExp: return o.text.empty() ? "FOEXP" : "FOEXP " + o.text;
    case K::kMd5: return "md5 " + o.text;
    case K::kUnknown: return o.text;
  }
  return "?";
}

std::string ecn_text(Ecn e) {
  switch (e) {
    case Ecn::kEct0: return "[ect0]";
    case Ecn::kEct1: return "[ect1]";
    case Ecn::kEct01: return "[ect01]";
    case Ecn::kCe: return "[ce]";
    case Ecn::kNotEct: return "[noecn]";
    case Ecn::kUnset: break;
  }
  return "";
}

// The IP attributes the script names, as it names them: [tos 0x..],
// [ttl N], [flowlabel 0x..] (the live packet's shown in the same place,
// for the caret).
void render_ip(Rendered& r, const PacketSpec& p, uint8_t tos, uint8_t ttl, uint32_t flowlabel) {
  if (p.tos) r.fields.push_back({"tos", fmt::format("[tos 0x{:x}]", tos)});
  if (p.ttl) r.fields.push_back({"ttl", fmt::format("[ttl {}]", ttl)});
  if (p.flowlabel) r.fields.push_back({"flowlabel", fmt::format("[flowlabel 0x{:x}]", flowlabel)});
}

Rendered render_expected(const PacketSpec& p) {
  Rendered r;
  if (p.ecn != Ecn::kUnset) r.fields.push_back({"ecn", ecn_text(p.ecn)});
  render_ip(r, p, static_cast<uint8_t>(p.tos.value_or(0)), static_cast<uint8_t>(p.ttl.value_or(0)),
            p.flowlabel.value_or(0));
  r.fields.push_back({"flags", p.flags_text});
  r.fields.push_back({"seq", fmt::format("{}:{}({})", p.seq_start, p.seq_end, p.len)});
  if (p.ack) r.fields.push_back({"ack", fmt::format("ack {}", *p.ack)});
  if (p.win) r.fields.push_back({"win", fmt::format("win {}", *p.win)});
  if (p.urg) r.fields.push_back({"urg", fmt::format("urg {}", *p.urg)});
  if (p.options_any) {
    r.fields.push_back({"options", "<...>"});
  } else if (p.options_given || !p.options.empty()) {
    std::string s = "<";
    for (size_t i = 0; i < p.options.size(); ++i) s += (i ? "," : "") + option_text(p.options[i]);
    r.fields.push_back({"options", s + ">"});
  }
  return r;
}

// One outbound packet mapped into script space.
struct Actual {
  uint8_t flags = 0;
  uint32_t seq = 0;  // script space
  uint32_t len = 0;
  uint32_t ack = 0;
  uint16_t win = 0;
  uint16_t urg = 0;  // the urgent pointer
  uint8_t tos = 0;  // IPv4 TOS / IPv6 traffic class, ECN field included
  uint8_t ttl = 0;  // IPv4 TTL / IPv6 hop limit
  uint32_t flowlabel = 0;  // IPv6 flow label (RFC 6437)
  bool v6 = false;
  wire::TcpOptions options;
  uint32_t ts_val_script = 0;  // TS val mapped to script space
};

Rendered render_actual(const PacketSpec& p, const Actual& a) {
  Rendered r;
  if (p.ecn != Ecn::kUnset) {
    static const char* kEcn[] = {"[noecn]", "[ect1]", "[ect0]", "[ce]"};
    r.fields.push_back({"ecn", kEcn[a.tos & 3]});
  }
  render_ip(r, p, a.tos, a.ttl, a.flowlabel);
  std::string flags = wire::format_flags(a.flags);
  r.fields.push_back({"flags", flags.empty() ? "-" : flags});
  r.fields.push_back({"seq", fmt::format("{}:{}({})", a.seq, a.seq + a.len, a.len)});
  if (a.flags & wire::tcp_flag::ACK) r.fields.push_back({"ack", fmt::format("ack {}", a.ack)});
  r.fields.push_back({"win", fmt::format("win {}", a.win)});
  if (a.urg || (a.flags & wire::tcp_flag::URG)) r.fields.push_back({"urg", fmt::format("urg {}", a.urg)});
  wire::TcpOptions o = a.options;
  if (o.ts) o.ts->val = a.ts_val_script;
  std::string opts = wire::format_options(o);
  if (!opts.empty()) r.fields.push_back({"options", opts});
  return r;
}

std::vector<uint8_t> hex_bytes(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// A Fast Open option's bytes as the script writes it: kind 34, or kind 254
// with the experimental magic (RFC 7413 §4.1.1), then the cookie if any.
std::vector<uint8_t> fastopen_bytes(const OptionSpec& s) {
  std::vector<uint8_t> cookie = hex_bytes(s.text);
  const bool exp = s.kind == K::kFastOpenExp;
  std::vector<uint8_t> raw;
  raw.push_back(exp ? wire::tcp_opt::EXP : wire::tcp_opt::FASTOPEN);
  raw.push_back(static_cast<uint8_t>((exp ? 4 : 2) + cookie.size()));
  if (exp) {
    raw.push_back(static_cast<uint8_t>(wire::kFastOpenExpMagic >> 8));
    raw.push_back(static_cast<uint8_t>(wire::kFastOpenExpMagic & 0xff));
  }
  raw.insert(raw.end(), cookie.begin(), cookie.end());
  return raw;
}

// An MD5 option as the script writes it: kind 19, length 2 + the digest's
// bytes (packetdrill allows fewer than 16, to send malformed options).
std::vector<uint8_t> md5_bytes(const OptionSpec& s) {
  std::vector<uint8_t> raw = hex_bytes(s.text);
  raw.insert(raw.begin(), {wire::tcp_opt::MD5, static_cast<uint8_t>(2 + raw.size())});
  return raw;
}

void add_raw_item(wire::TcpOptions& o, uint8_t kind, const std::vector<uint8_t>& bytes) {
  if (o.item_count >= o.items.size() || o.raw_len + bytes.size() > o.raw.size()) return;
  o.items[o.item_count++] = {kind, o.raw_len, static_cast<uint8_t>(bytes.size())};
  std::memcpy(o.raw.data() + o.raw_len, bytes.data(), bytes.size());
  o.raw_len = static_cast<uint8_t>(o.raw_len + bytes.size());
}

}  // namespace

// ---------------------------------------------------------------- inbound

namespace {

struct IcmpCodes {
  uint8_t type = 0;
  uint8_t code = 0;
  bool ok = true;
};

// packetdrill's ICMP type and code names, per IP version.
IcmpCodes icmp_codes(const PacketSpec& p, bool v6) {
  IcmpCodes c;
  const std::string& t = p.icmp_type;
  const std::string& k = p.icmp_code;
  if (!v6) {
    static const char* kUnreach[] = {"net_unreachable", "host_unreachable", "protocol_unreachable",
                                     "port_unreachable", "frag_needed", "source_route_failed",
                                     "net_unknown", "host_unknown"};
    if (t == "unreachable") c.type = 3;
    else if (t == "time_exceeded") c.type = 11;
    else if (t == "packet_too_big") { c.type = 3; c.code = 4; return c; }
    else c.ok = false;
    if (!k.empty()) {
      c.ok = false;
      for (uint8_t i = 0; i < 8; ++i)
        if (k == kUnreach[i]) { c.code = i; c.ok = true; }
    }
    return c;
  }
  if (t == "packet_too_big" || k == "frag_needed") { c.type = 2; return c; }
  if (t == "unreachable") c.type = 1;
  else if (t == "time_exceeded") c.type = 3;
  else c.ok = false;
  if (k == "host_unreachable") c.code = 3;
  else if (k == "port_unreachable") c.code = 4;
  else if (!k.empty() && k != "net_unreachable") c.ok = false;
  return c;
}

}  // namespace

// An ICMP error quoting our own packet (packetdrill's ICMP lines).
Status Runner::inject_icmp(const Event& e, const PacketSpec& p, uint32_t local_off) {
  bool v6 = cfg_.ip_version == IpVersion::kIpv6;
  IcmpCodes c = icmp_codes(p, v6);
  if (!c.ok) return stop(Outcome::kSkip, fmt::format("unsupported ICMP '{} {}'", p.icmp_type, p.icmp_code));
  // Linux tcp_v4_mtu_reduced ignores a smaller path MTU under
  // IP_PMTUDISC_DONT; the engine has no such switch.
  const bool too_big = v6 ? c.type == 2 : (c.type == 3 && c.code == 4);
  if (auto sut = fds_.find(sut_fd_); too_big && sut != fds_.end() && sut->second.pmtudisc == 0)
    return stop(Outcome::kSkip, "ICMP 'fragmentation needed' under IP_PMTUDISC_DONT is not modelled");
  wire::IpInfo q;
  q.src = conn_.local.addr;
  q.dst = conn_.remote.addr;
  size_t qip = v6 ? wire::kIpv6Header : wire::kIpv4HeaderMin;
  size_t ip = qip;
  std::vector<uint8_t> pkt(ip + 8 + qip + 8);
  uint8_t* icmp = pkt.data() + ip;
  icmp[0] = c.type;
  icmp[1] = c.code;
  if (p.icmp_mtu) {
    if (v6) wire::store_be32(icmp + 4, *p.icmp_mtu);
    else wire::store_be16(icmp + 6, static_cast<uint16_t>(*p.icmp_mtu));
  }
  uint8_t* quoted = icmp + 8;
  // The quoted datagram: our own packet's IP header and first 8 TCP bytes.
  wire::TcpHeader h;
  h.src_port = conn_.local.port;
  h.dst_port = conn_.remote.port;
  h.seq = Seq32(p.seq_start + local_off);
  auto qbytes = wire::build_tcp_packet(q, h, {});
  std::memcpy(quoted, qbytes.data(), qip + 8);
  // Outer header.
  uint8_t* o = pkt.data();
  size_t total = pkt.size();
  if (!v6) {
    o[0] = 0x45;
    wire::store_be16(o + 2, static_cast<uint16_t>(total));
    wire::store_be16(o + 6, 0x4000);
    o[8] = 64;
    o[9] = wire::kProtoIcmp;
    wire::store_be32(o + 12, conn_.remote.addr.v4_host_order());
    wire::store_be32(o + 16, conn_.local.addr.v4_host_order());
    wire::store_be16(o + 10, wire::csum_fold(wire::csum_partial({o, wire::kIpv4HeaderMin})));
    wire::store_be16(icmp + 2, wire::csum_fold(wire::csum_partial({icmp, total - ip})));
  } else {
    wire::store_be32(o, 6u << 28);
    wire::store_be16(o + 4, static_cast<uint16_t>(total - ip));
    o[6] = wire::kProtoIcmpv6;
    o[7] = 64;
    std::memcpy(o + 8, conn_.remote.addr.bytes().data(), 16);
    std::memcpy(o + 24, conn_.local.addr.bytes().data(), 16);
    uint32_t sum = wire::pseudo_header_sum(conn_.remote.addr, conn_.local.addr, wire::kProtoIcmpv6,
                                           static_cast<uint32_t>(total - ip));
    wire::store_be16(icmp + 2, wire::csum_fold(wire::csum_partial({icmp, total - ip}, sum)));
  }
  log(fmt::format("{} < icmp {} {} (line {})", fmt_time(now_), p.icmp_type, p.icmp_code, e.pos.line));
  res_.packets.emplace_back(now_, pkt);
  stack_->input(now_, pkt);
  if (auto s = engine_status(); !s) return s;
  return poll_pending();
}

// The script's option list, in its order (NOPs included), with SACK
// blocks and TS ecr mapped to live values.
Status Runner::inbound_options(const PacketSpec& p, uint32_t local_off, wire::TcpOptions& o) {
  for (const OptionSpec& s : p.options) {
    uint8_t kind = 0;
    switch (s.kind) {
      case K::kNop: kind = wire::tcp_opt::NOP; break;
      case K::kEol: kind = wire::tcp_opt::EOL; break;
      case K::kMss: kind = wire::tcp_opt::MSS; o.mss = static_cast<uint16_t>(s.a); break;
      case K::kWscale: kind = wire::tcp_opt::WSCALE; o.wscale = static_cast<uint8_t>(s.a); break;
      case K::kSackOk: kind = wire::tcp_opt::SACK_PERMITTED; o.sack_permitted = true; break;
      case K::kSack:
        kind = wire::tcp_opt::SACK;
        for (auto [a, b] : s.blocks) o.add_sack({Seq32(a + local_off), Seq32(b + local_off)});
        break;
      case K::kTimestamp: {
        kind = wire::tcp_opt::TIMESTAMP;
        uint32_t ecr = s.b;
        if (p.flags & wire::tcp_flag::ACK) {
          // packetdrill: the ecr names a TS val the script expected from us.
          auto it = conn_.ts_val_map.find(s.b);
          if (it != conn_.ts_val_map.end()) ecr = it->second;
          else if (cfg_.ts_ecr_scaled && conn_.first_ts) ecr = s.b - conn_.first_script_ts_val + conn_.first_live_ts_val;
          else return stop(Outcome::kFail, fmt::format("unable to infer live TS ecr for script TS ecr {}; "
                                                       "no matching or preceding outbound TS val", s.b));
        }
        o.ts = wire::TcpTimestamps{s.a, ecr};
        break;
      }
      case K::kFastOpen:
      case K::kFastOpenExp: {
        std::vector<uint8_t> raw = fastopen_bytes(s);
        add_raw_item(o, raw[0], raw);
        continue;
      }
      case K::kMd5: {
        // packetdrill sends the script's digest bytes; it computes none.
        std::vector<uint8_t> raw = md5_bytes(s);
        add_raw_item(o, raw[0], raw);
        continue;
      }
      case K::kUnknown: return stop(Outcome::kSkip, fmt::format("unsupported TCP option '{}'", s.text));
    }
    if (o.item_count < o.items.size()) o.items[o.item_count++] = {kind, 0, 0};
  }
  return ok();
}

Status Runner::inject(const Event& e, const PacketSpec& p) {
  if (!conn_.known) {
    conn_.known = true;
    conn_.local = {cfg_.local_ip, cfg_.bind_port};
    conn_.remote = {cfg_.remote_ip, next_remote_port_++};
  }
  // packetdrill (local_seq_script_to_live_offset): our ISN as the script
  // wrote it counts on SYNs only; elsewhere our sequence numbers are
  // relative to the live ISN.
  uint32_t local_off = conn_.live_local_isn - ((p.flags & wire::tcp_flag::SYN) ? conn_.script_local_isn : 0);
  if (p.icmp) return inject_icmp(e, p, local_off);
  if (p.flags & 0x100) return stop(Outcome::kSkip, "the AE (AccECN) flag is not supported");
  if (!p.ip_unknown.empty()) return stop(Outcome::kSkip, fmt::format("unsupported IP attribute '{}'", p.ip_unknown[0]));
  bool syn_only = (p.flags & wire::tcp_flag::SYN) && !(p.flags & wire::tcp_flag::ACK);
  bool have_listener = std::any_of(fds_.begin(), fds_.end(), [](const auto& f) { return f.second.listener; });
  if (syn_only && have_listener && conn_.closed) {
    // A new connection to the listener once the script closed the last one
    // (packetdrill maps a SYN to the socket under test until then): a fresh
    // remote port, fresh ISNs.
    conn_ = Conn{};
    conn_.known = true;
    conn_.local = {cfg_.local_ip, cfg_.bind_port};
    conn_.remote = {cfg_.remote_ip, next_remote_port_++};
    local_off = 0;
  }
  // packetdrill (remote_seq_script_to_live_offset): a SYN's seq is absolute
  // and names the remote ISN; every later seq is relative to it.
  const bool syn = (p.flags & wire::tcp_flag::SYN) != 0;
  if (syn) conn_.remote_isn = p.seq_start;

  wire::TcpHeader h;
  h.src_port = conn_.remote.port;
  h.dst_port = conn_.local.port;
  h.seq = Seq32(p.seq_start + (syn ? 0 : conn_.remote_isn));
  h.flags = static_cast<uint8_t>(p.flags & 0xff);
  // packetdrill maps the ack of every ACK-flagged packet, an omitted one as 0.
  if (p.flags & wire::tcp_flag::ACK) h.ack = Seq32(p.ack.value_or(0) + local_off);
  else if (p.ack) h.ack = Seq32(*p.ack);
  h.window = static_cast<uint16_t>(p.win.value_or(0));
  h.urgent = static_cast<uint16_t>(p.urg.value_or(0));
  if (auto s = inbound_options(p, local_off, h.options); !s) return s;

  wire::IpInfo ip;
  ip.src = conn_.remote.addr;
  ip.dst = conn_.local.addr;
  static const uint8_t kEcnBits[] = {0, 0, 2, 1, 3, 3};  // unset, not-ECT, ECT0, ECT1, ECT01, CE
  ip.tos = static_cast<uint8_t>(p.tos.value_or(0) | kEcnBits[static_cast<int>(p.ecn)]);
  if (p.ttl) ip.ttl = static_cast<uint8_t>(*p.ttl);
  if (p.flowlabel) ip.flow_label = *p.flowlabel;

  return send_inbound(e, p, h, ip);
}

// Hands the packet to the stack. With --mss a longer packet is a GRO
// super-packet (packetdrill cooks it with gso_size = mss on its tun
// device): it goes in as one receive-offload aggregate, as Linux's receiver
// takes it as one skb (one ACK decision in __tcp_ack_snd_check; rcv_mss
// from gso_size in tcp_measure_rcv_mss).
Status Runner::send_inbound(const Event& e, const PacketSpec& p, const wire::TcpHeader& h, const wire::IpInfo& ip) {
  if (cfg_.mss != 0 && p.len > cfg_.mss && cfg_.mss <= 0xffff) {
    std::vector<uint8_t> payload(p.len, 0);
    auto bytes = wire::build_tcp_packet(ip, h, payload);
    if (bytes.empty()) return stop(Outcome::kFail, "the script's packet cannot be built (too large)");
    log(fmt::format("{} < {} {}:{}({}) gso_size {} (line {})", fmt_time(now_), wire::format_flags(h.flags),
                    p.seq_start, p.seq_start + p.len, p.len, cfg_.mss, e.pos.line));
    res_.packets.emplace_back(now_, bytes);
    stack_->input_aggregate(now_, bytes, static_cast<uint16_t>(cfg_.mss));
    if (auto s = engine_status(); !s) return s;
    return poll_pending();
  }
  uint32_t seg = std::max<uint32_t>(p.len, 1);
  uint32_t sent = 0;
  do {
    uint32_t n = std::min(seg, p.len - sent);
    wire::TcpHeader hh = h;
    hh.seq = h.seq + sent;
    if (sent + n < p.len) hh.flags &= static_cast<uint8_t>(~(wire::tcp_flag::FIN | wire::tcp_flag::PSH));
    std::vector<uint8_t> payload(n, 0);
    auto bytes = wire::build_tcp_packet(ip, hh, payload);
    if (bytes.empty()) return stop(Outcome::kFail, "the script's packet cannot be built (too large)");
    log(fmt::format("{} < {} {}:{}({}) (line {})", fmt_time(now_), wire::format_flags(hh.flags),
                    p.seq_start + sent, p.seq_start + sent + n, n, e.pos.line));
    res_.packets.emplace_back(now_, bytes);
    stack_->input(now_, bytes);
    if (auto s = engine_status(); !s) return s;
    if (auto s = poll_pending(); !s) return s;
    sent += n;
  } while (sent < p.len);
  return ok();
}

// ---------------------------------------------------------------- outbound

std::string Runner::describe_live(const wire::TcpPacket& pk, uint32_t payload_len) const {
  std::string flags = wire::format_flags(pk.tcp.flags);
  return fmt::format("{} {}:{}({}) ack {} win {} {}", flags.empty() ? "-" : flags, pk.tcp.seq.raw(),
                     pk.tcp.seq.raw() + payload_len, payload_len, pk.tcp.ack.raw(), pk.tcp.window,
                     wire::format_options(pk.tcp.options));
}

namespace {

// The live packet in script space (sequence numbers relative to the ISNs).
// Remote sequence numbers (ack, SACK blocks) are absolute on a SYN and
// relative to the remote ISN on anything else, as packetdrill maps them.
Actual actual_of(const wire::TcpPacket& pk, uint32_t local_off, uint32_t remote_isn) {
  Actual a;
  const uint32_t remote_off = pk.tcp.has(wire::tcp_flag::SYN) ? 0 : remote_isn;
  a.flags = pk.tcp.flags;
  a.seq = pk.tcp.seq.raw() - local_off;
  a.len = static_cast<uint32_t>(pk.payload.size());
  a.ack = pk.tcp.ack.raw() - remote_off;
  a.win = pk.tcp.window;
  a.urg = pk.tcp.urgent;
  a.tos = pk.ip.tos;
  a.ttl = pk.ip.ttl;
  a.flowlabel = pk.ip.flow_label;
  a.v6 = pk.ip.version == 6;
  a.options = pk.tcp.options;
  for (size_t i = 0; i < a.options.sack_count; ++i)
    a.options.sack[i] = {a.options.sack[i].begin - remote_off, a.options.sack[i].end - remote_off};
  return a;
}

// TS val: remember script -> live, and map live into script space.
void map_ts_val(Conn& conn, const PacketSpec& p, Actual& a) {
  const OptionSpec* ts_spec = nullptr;
  for (const auto& o : p.options)
    if (o.kind == K::kTimestamp) ts_spec = &o;
  if (!a.options.ts) return;
  uint32_t live_val = a.options.ts->val;
  if (ts_spec) {
    conn.ts_val_map[ts_spec->a] = live_val;
    if (!conn.first_ts) {
      conn.first_ts = true;
      conn.first_script_ts_val = ts_spec->a;
      conn.first_live_ts_val = live_val;
    }
  }
  a.ts_val_script = conn.first_ts ? conn.first_script_ts_val + (live_val - conn.first_live_ts_val) : live_val;
}

struct Mismatch {
  std::string field;  // where the caret goes
  std::string what;
};

// The header fields, in packetdrill's order.
std::optional<Mismatch> header_mismatch(const PacketSpec& p, const Actual& a) {
  if (p.ecn != Ecn::kUnset) {
    static const int kWant[] = {-1, 0, 2, 1, -2, 3};
    int w = kWant[static_cast<int>(p.ecn)];
    int g = a.tos & 3;
    if ((w == -2 && g != 1 && g != 2) || (w >= 0 && w != g))
      return Mismatch{"ecn", fmt::format("live packet field ip_ecn: expected {} vs actual {}", ecn_text(p.ecn), g)};
  }
  // [tos T] is the whole byte, DSCP and ECN field (RFC 2474 §3, RFC 3168
  // §5): the IPv4 TOS or the IPv6 traffic class. [ttl N]: the TTL or hop
  // limit (RFC 791, RFC 8200 §3).
  if (p.tos && *p.tos != a.tos)
    return Mismatch{"tos", fmt::format("live packet field ip_tos: expected 0x{:x} vs actual 0x{:x}", *p.tos, a.tos)};
  if (p.ttl && *p.ttl != a.ttl)
    return Mismatch{"ttl", fmt::format("live packet field ip_ttl: expected {} vs actual {}", *p.ttl, a.ttl)};
  // [flowlabel F]: the IPv6 flow label (RFC 6437). Checked only when the
  // script names it, as packetdrill (Linux picks it from a random hash);
  // an IPv4 packet has none to check.
  if (p.flowlabel && a.v6 && *p.flowlabel != a.flowlabel)
    return Mismatch{"flowlabel", fmt::format("live packet field ipv6_flow_label: expected 0x{:x} vs actual 0x{:x}",
                                             *p.flowlabel, a.flowlabel)};
  if ((p.flags & 0xff) != a.flags)
    return Mismatch{"flags", fmt::format("live packet field tcp flags: expected '{}' vs actual '{}'", p.flags_text,
                                         wire::format_flags(a.flags))};
  if (a.seq != p.seq_start)
    return Mismatch{"seq", fmt::format("live packet field tcp_seq: expected {} vs actual {}", p.seq_start, a.seq)};
  if (a.len != p.len)
    return Mismatch{"seq", fmt::format("live packet payload: expected {} bytes vs actual {} bytes", p.len, a.len)};
  if ((p.flags & wire::tcp_flag::ACK) && p.ack && *p.ack != a.ack)
    return Mismatch{"ack", fmt::format("live packet field tcp_ack_seq: expected {} vs actual {}", *p.ack, a.ack)};
  if (p.win && *p.win != a.win)
    return Mismatch{"win", fmt::format("live packet field tcp_window: expected {} vs actual {}", *p.win, a.win)};
  // packetdrill checks the urgent pointer on every packet: 0 unless the
  // script gives `urg N`.
  if (p.urg.value_or(0) != a.urg)
    return Mismatch{"urg", fmt::format("live packet field tcp_urg_ptr: expected {} vs actual {}", p.urg.value_or(0), a.urg)};
  return std::nullopt;
}

// One option against the script's; empty when it matches. TS val is
// checked only with --tcp_ts_tick_usecs, within `slack` ticks.
std::string option_mismatch(const OptionSpec& s, const wire::TcpOptions& lo2, size_t i, const Actual& a,
                            int64_t slack) {
  const wire::TcpOptionItem& it = lo2.items[i];
  static const uint8_t kKinds[] = {wire::tcp_opt::NOP, wire::tcp_opt::EOL, wire::tcp_opt::MSS,
                                   wire::tcp_opt::WSCALE, wire::tcp_opt::SACK_PERMITTED,
                                   wire::tcp_opt::SACK, wire::tcp_opt::TIMESTAMP,
                                   wire::tcp_opt::FASTOPEN, wire::tcp_opt::EXP, wire::tcp_opt::MD5, 0};
  uint8_t want_kind = kKinds[static_cast<int>(s.kind)];
  if (s.kind == K::kUnknown || it.kind != want_kind)
    return fmt::format("live packet TCP option {}: expected '{}' vs actual kind {}", i + 1, option_text(s), it.kind);
  if (s.kind == K::kMss && lo2.mss && *lo2.mss != s.a)
    return fmt::format("live packet TCP option mss: expected {} vs actual {}", s.a, *lo2.mss);
  if (s.kind == K::kWscale && lo2.wscale && *lo2.wscale != s.a)
    return fmt::format("live packet TCP option wscale: expected {} vs actual {}", s.a, *lo2.wscale);
  if (s.kind == K::kSack) {
    bool same = s.blocks.size() == lo2.sack_count;
    for (size_t b = 0; same && b < s.blocks.size(); ++b)
      same = lo2.sack[b].begin.raw() == s.blocks[b].first && lo2.sack[b].end.raw() == s.blocks[b].second;
    if (!same) return "live packet TCP option sack: blocks differ";
  }
  if (s.kind == K::kFastOpen || s.kind == K::kFastOpenExp) {
    // The whole option, cookie included, byte for byte.
    std::vector<uint8_t> want = fastopen_bytes(s);
    if (it.len != want.size() || std::memcmp(lo2.raw.data() + it.offset, want.data(), want.size()) != 0)
      return fmt::format("live packet TCP option {}: expected '{}' vs actual '{}'", i + 1, option_text(s),
                         wire::format_options(lo2));
  }
  // An outbound signature depends on the live ports and sequence numbers,
  // which a script cannot know: kind and length are compared, not the digest.
  if (s.kind == K::kMd5 && it.len != 2 + s.text.size() / 2)
    return fmt::format("live packet TCP option md5: expected length {} vs actual {}", 2 + s.text.size() / 2, it.len);
  if (s.kind == K::kTimestamp && lo2.ts) {
    if (lo2.ts->ecr != s.b) return fmt::format("live packet TCP option TS ecr: expected {} vs actual {}", s.b, lo2.ts->ecr);
    int64_t d = static_cast<int32_t>(a.ts_val_script - s.a);
    if (slack > 0 && (d > slack || d < -slack))
      return fmt::format("live packet TCP option TS val: expected {} vs actual {}", s.a, a.ts_val_script);
  }
  return {};
}

// The option list kind by kind, NOPs included (trailing EOL padding aside).
std::string options_mismatch(const PacketSpec& p, const Actual& a, int64_t slack) {
  if (p.options_any) return {};
  const wire::TcpOptions& lo2 = a.options;
  size_t n = lo2.item_count;
  while (n > p.options.size() && lo2.items[n - 1].kind == wire::tcp_opt::EOL) --n;  // padding
  if (n != p.options.size())
    return fmt::format("live packet TCP options: expected {} options vs actual {}", p.options.size(), n);
  for (size_t i = 0; i < n; ++i) {
    std::string why = option_mismatch(p.options[i], lo2, i, a, slack);
    if (!why.empty()) return why;
  }
  return {};
}

}  // namespace

// packetdrill sniffs only the socket under test's packets
// (find_socket_for_live_packet): once the script began a new active
// connection, what an older socket still sends (the FIN of its close()) is
// not matched against the script.
void Runner::drop_foreign_outbound() {
  auto sut = fds_.find(sut_fd_);
  if (sut != fds_.end() && sut->second.active)
    if (auto ep = stack_->local_endpoint(sut->second.sock); ep && ep->port != 0) sut_port_ = ep->port;
  if (sut_port_ == 0) return;
  while (!outq_.empty()) {
    auto pk = wire::parse_tcp_packet(outq_.front().bytes);
    if (!pk || pk->tcp.src_port == sut_port_) break;
    outq_.pop_front();
  }
}

// Runs the engine until it has sent something, at most until `limit`.
Expected<bool, Stop> Runner::next_outbound(Time limit) {
  drop_foreign_outbound();
  while (outq_.empty()) {
    auto stepped = step_engine_once(limit);
    if (!stepped || !*stepped) return stepped;
    drop_foreign_outbound();
  }
  return true;
}

// Learn the connection: a SYN from connect() names our port; a SYN's seq is our ISN.
void Runner::learn_conn(const wire::TcpPacket& pk, const PacketSpec& p) {
  if (!conn_.known || (pk.tcp.has(wire::tcp_flag::SYN) && !pk.tcp.has(wire::tcp_flag::ACK))) {
    conn_.known = true;
    conn_.local = {pk.ip.src, pk.tcp.src_port};
    conn_.remote = {pk.ip.dst, pk.tcp.dst_port};
  }
  if (pk.tcp.has(wire::tcp_flag::SYN)) {
    conn_.local_isn_known = true;
    conn_.live_local_isn = pk.tcp.seq.raw();
    conn_.script_local_isn = (p.flags & wire::tcp_flag::SYN) ? p.seq_start : 0;
  }
}

namespace {

// The segments after `first` that continue it, merged into `a` as
// packetdrill sees a TSO burst: consecutive, same ACK, up to the script's
// length.
Status merge_tso(Runner& r, const wire::TcpPacket& first, const PacketSpec& p, Time hi, Actual& a) {
  uint32_t live_end = first.tcp.seq.raw() + a.len;
  while (a.len > 0 && a.len < p.len) {
    auto more = r.next_outbound(hi);
    if (!more) return stopped(more);
    if (!*more) break;
    auto nx = wire::parse_tcp_packet(r.outq_.front().bytes);
    if (!nx || nx->tcp.seq.raw() != live_end || nx->tcp.ack != first.tcp.ack || nx->payload.empty() ||
        a.len + nx->payload.size() > p.len)
      break;
    a.len += static_cast<uint32_t>(nx->payload.size());
    live_end += static_cast<uint32_t>(nx->payload.size());
    // PSH as on the run's last segment: Linux's GSO (tcp_gso_segment) clears
    // it on all but the last segment of an skb, so a merged run shows the
    // last skb's PSH.
    a.flags = static_cast<uint8_t>((a.flags & ~wire::tcp_flag::PSH) |
                                   (nx->tcp.flags & (wire::tcp_flag::PSH | wire::tcp_flag::FIN)));
    r.outq_.pop_front();
  }
  return ok();
}

// The packet sent at `at` against the script's: fields, options, then the
// time, as packetdrill checks them.
Status match_outbound(Runner& r, const Event& e, const PacketSpec& p, const Actual& a, Time at, Time lo,
                      Time hi, Time expected) {
  Rendered want = render_expected(p);
  Rendered got = render_actual(p, a);
  r.log(fmt::format("{} > {} (line {})", r.fmt_time(at), got.text(), e.pos.line));
  auto mismatch = [&](const std::string& field, const std::string& what) {
    std::string caret(got.offset_of(field) + 10, ' ');
    return r.stop(Outcome::kFail, what, {"expected: " + want.text(), "actual:   " + got.text(), caret + "^ " + field});
  };
  if (auto m = header_mismatch(p, a)) return mismatch(m->field, m->what);
  // TS val slack: the timing tolerance, expressed in TS ticks.
  const int64_t tick = r.cfg_.ts_tick_usecs;
  const int64_t slack = tick > 0 ? std::max<int64_t>(1, (hi - lo).us() / 2 / tick + 1) : 0;
  if (std::string why = options_mismatch(p, a, slack); !why.empty()) return mismatch("options", why);
  // Timing last, as packetdrill checks it after the packet matched.
  if (at < lo || at > hi)
    return r.stop(Outcome::kFail,
                  fmt::format("timing error: expected outbound packet at {} sec but happened at {} sec ({:+.6f} "
                              "sec); window {}..{}", r.fmt_time(expected), r.fmt_time(at),
                              (at - expected).secs(), r.fmt_time(lo), r.fmt_time(hi)),
                  {"expected: " + want.text(), "actual:   " + got.text()});
  return ok();
}

}  // namespace

Status Runner::expect_outbound(const Event& e, const PacketSpec& p, Time lo, Time hi, Time expected) {
  if (p.icmp) return stop(Outcome::kSkip, "outbound ICMP packets are not supported");
  auto sent = next_outbound(hi);
  if (!sent) return stopped(sent);
  if (!*sent)
    return stop(Outcome::kFail, fmt::format("expected outbound packet at {} sec was not sent (waited until {} sec)",
                                            fmt_time(expected), fmt_time(hi)),
                {"expected: " + render_expected(p).text()});
  OutPacket out = std::move(outq_.front());
  outq_.pop_front();
  auto pk = wire::parse_tcp_packet(out.bytes);
  if (!pk)
    return stop(Outcome::kFail,
                fmt::format("the engine sent a packet that is not valid TCP: {}", wire::to_string(pk.error())),
                {"expected: " + render_expected(p).text()});
  learn_conn(*pk, p);
  const bool syn = pk->tcp.has(wire::tcp_flag::SYN);
  uint32_t local_off = conn_.live_local_isn - (syn ? conn_.script_local_isn : 0);
  Actual a = actual_of(*pk, local_off, conn_.remote_isn);
  if (!cfg_.strict_segments)
    if (auto s = merge_tso(*this, *pk, p, hi, a); !s) return s;
  map_ts_val(conn_, p, a);
  return match_outbound(*this, e, p, a, out.at, lo, hi, expected);
}

}  // namespace weir::pkt

#include "tcp/fastopen.h"

#include <charconv>
#include <vector>

#include "util/splitmix.h"

namespace weir::tcp::fastopen {
namespace {

uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// Exactly four hex words separated by '-'; false when the text is anything else.
bool parse_words(std::string_view s, std::array<uint32_t, 4>& out) {
  for (size_t i = 0; i < 4; ++i) {
    const size_t dash = s.find('-');
    if ((dash == std::string_view::npos) != (i == 3)) return false;  // three dashes, no more
    const std::string_view w = s.substr(0, dash);
    if (w.empty() || w.size() > 8) return false;
    auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), out[i], 16);
    if (ec != std::errc() || p != w.data() + w.size()) return false;
    if (dash != std::string_view::npos) s.remove_prefix(dash + 1);
  }
  return true;
}

SipKey key_from_words(const std::array<uint32_t, 4>& w) {
  // Linux: key[i] = cpu_to_le32(user_key[i]), then siphash_key_t from the
  // sixteen bytes as two little-endian 64-bit words.
  uint8_t b[16];
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 4; ++j) b[4 * i + j] = static_cast<uint8_t>(w[i] >> (8 * j));
  return key_from_bytes(b);
}

std::vector<uint8_t> addr_bytes(const IpAddr& a) {
  const auto& b = a.bytes();
  if (a.is_v4()) return {b[12], b[13], b[14], b[15]};
  return {b.begin(), b.end()};
}


}  // namespace

SipKey random_key(uint64_t seed) {
  // A stream of its own: the seed also keys ISNs and SYN cookies.
  uint64_t state = seed ^ 0x54434b4559u;  // "TCKEY"
  const uint64_t k0 = splitmix64(state);
  return SipKey{k0, splitmix64(state)};
}

SipKey key_from_bytes(const uint8_t* b) { return SipKey{load_le64(b), load_le64(b + 8)}; }

std::optional<Keys> parse_keys(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  size_t comma = text.find(',');
  std::array<uint32_t, 4> w{};
  if (!parse_words(text.substr(0, comma), w)) return std::nullopt;
  Keys k;
  k.primary = key_from_words(w);
  if (comma != std::string_view::npos) {
    if (!parse_words(text.substr(comma + 1), w)) return std::nullopt;
    k.backup = key_from_words(w);
  }
  return k;
}

Cookie make_cookie(const SipKey& key, const IpAddr& syn_src, const IpAddr& syn_dst) {
  std::vector<uint8_t> in = addr_bytes(syn_src);
  std::vector<uint8_t> dst = addr_bytes(syn_dst);
  in.insert(in.end(), dst.begin(), dst.end());
  const uint64_t h = siphash24(key, in);
  Cookie c;
  c.len = kCookieSize;
  for (size_t i = 0; i < kCookieSize; ++i) c.val[i] = static_cast<uint8_t>(h >> (8 * i));
  return c;
}

int check_cookie(const Keys& k, const IpAddr& syn_src, const IpAddr& syn_dst, const Cookie& c) {
  // Linux only ever issues 8-byte cookies; any other length is not ours.
  if (c.len != kCookieSize) return 0;
  if (make_cookie(k.primary, syn_src, syn_dst) == c) return 1;
  if (k.backup && make_cookie(*k.backup, syn_src, syn_dst) == c) return 2;
  return 0;
}

}  // namespace weir::tcp::fastopen

namespace weir::tcp::fastopen {
namespace {

wire::TcpFastOpen option_of(const Cookie& c, bool exp) {
  wire::TcpFastOpen o;
  o.exp = exp;
  o.len = static_cast<int8_t>(c.len);
  for (size_t i = 0; i < c.len; ++i) o.cookie[i] = c.val[i];
  return o;
}

}  // namespace

ServerDecision server_decide(const ServerSyn& syn, const Keys& keys, Counters& c) {
  ServerDecision d;
  const std::optional<wire::TcpFastOpen>& fo = syn.option;
  if (fo && fo->len == 0) c.inc(Counter::TcpExtTCPFastOpenCookieReqd);  // a cookie request
  // Server side on, something to do (data or a well-formed option), and room
  // in the listener's Fast Open queue (RFC 7413 §5.1's defence).
  if (!((syn.sysctl & kServerEnable) && (syn.syn_data || (fo && fo->len >= 0)) && syn.queue_ok)) return d;
  if ((syn.sysctl & kServerCookieNotReqd) || syn.no_cookie) {
    c.inc(Counter::TcpExtTCPFastOpenPassive);
    d.child = true;
    return d;
  }
  const bool exp = fo && fo->exp;  // the reply uses the client's option kind
  const Cookie mine = make_cookie(keys.primary, syn.src, syn.dst);
  if (fo && fo->len == 0) {
    d.reply = option_of(mine, exp);
    return d;
  }
  if (fo && fo->len > 0) {
    Cookie theirs;
    theirs.len = static_cast<uint8_t>(fo->len);
    for (int i = 0; i < fo->len; ++i) theirs.val[i] = fo->cookie[i];
    const int which = check_cookie(keys, syn.src, syn.dst, theirs);
    if (which != 0) {
      c.inc(Counter::TcpExtTCPFastOpenPassive);
      d.child = true;
      // A cookie of the backup key is accepted and replaced by a fresh one.
      if (which == 2) {
        c.inc(Counter::TcpExtTCPFastOpenPassiveAltKey);
        d.reply = option_of(mine, exp);
      }
      return d;
    }
    c.inc(Counter::TcpExtTCPFastOpenPassiveFail);
    d.reply = option_of(mine, exp);
  }
  return d;
}

}  // namespace weir::tcp::fastopen

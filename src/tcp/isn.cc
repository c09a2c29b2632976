#include "tcp/isn.h"

#include <algorithm>
#include <array>

#include "util/siphash.h"

namespace weir::tcp {
namespace {

void store_le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

constexpr std::array<uint16_t, 4> kMssTable = {536, 1300, 1440, 1460};  // Linux msstab
constexpr int kCookieBits = 24;
constexpr uint32_t kCookieMask = (1u << kCookieBits) - 1;
constexpr uint32_t kMaxCookieAge = 2;  // minutes, Linux MAX_SYNCOOKIE_AGE
constexpr int kTsBits = 6;

uint32_t cookie_minute(Time now) { return static_cast<uint32_t>(now.ns() / Duration::s(60).ns()); }

uint32_t cookie_hash(uint64_t secret, const FourTuple& t, uint32_t count, uint32_t c) {
  return static_cast<uint32_t>(tuple_hash(secret + c, t, count));
}

}  // namespace

uint64_t tuple_hash(uint64_t secret, const FourTuple& t, uint64_t extra) {
  // SipHash-2-4 (util/siphash.h) of both addresses, the ports and `extra`,
  // keyed by the driver's secret expanded to 128 bits.
  std::array<uint8_t, 48> in{};
  const auto& l = t.local.addr.bytes();
  const auto& r = t.remote.addr.bytes();
  std::copy(l.begin(), l.end(), in.begin());
  std::copy(r.begin(), r.end(), in.begin() + 16);
  store_le64(in.data() + 32, (uint64_t{t.local.port} << 16) | t.remote.port);
  store_le64(in.data() + 40, extra);
  const SipKey key{secret, secret * 0x9e3779b97f4a7c15ull + 0x5745495221ull};
  return siphash24(key, in);
}

Seq32 initial_sequence(uint64_t secret, const FourTuple& t, Time now) {
  const uint32_t f = static_cast<uint32_t>(tuple_hash(secret, t, 0x15));
  const uint32_t m = static_cast<uint32_t>(static_cast<uint64_t>(now.ns()) >> 6);
  return Seq32(f + m);  // RFC 6528 §3
}

uint32_t timestamp_offset(uint64_t secret, const FourTuple& t) {
  return static_cast<uint32_t>(tuple_hash(secret, t, 0x75));
}

uint32_t port_offset(uint64_t secret, const IpAddr& local, const Endpoint& remote) {
  FourTuple t{Endpoint{local, 0}, remote};
  return static_cast<uint32_t>(tuple_hash(secret, t, 0x90));
}

Seq32 make_cookie_isn(uint64_t secret, const FourTuple& t, Seq32 peer_isn, Time now,
                      uint16_t mss) {
  uint32_t idx = 0;
  for (uint32_t i = 0; i < kMssTable.size(); ++i)
    if (mss >= kMssTable[i]) idx = i;  // the largest table value not above the peer's MSS
  const uint32_t count = cookie_minute(now);
  const uint32_t v = cookie_hash(secret, t, 0, 0) + peer_isn.raw() + (count << kCookieBits) +
                     ((cookie_hash(secret, t, count, 1) + idx) & kCookieMask);
  return Seq32(v);
}

std::optional<uint16_t> check_cookie(uint64_t secret, const FourTuple& t, Seq32 peer_isn,
                                     Seq32 cookie, Time now) {
  const uint32_t count = cookie_minute(now);
  const uint32_t c = cookie.raw() - cookie_hash(secret, t, 0, 0) - peer_isn.raw();
  const uint32_t age = (count - (c >> kCookieBits)) & (0xffffffffu >> kCookieBits);
  if (age >= kMaxCookieAge) return std::nullopt;
  const uint32_t idx = (c - cookie_hash(secret, t, count - age, 1)) & kCookieMask;
  if (idx >= kMssTable.size()) return std::nullopt;
  return kMssTable[idx];
}

uint32_t cookie_tsval(uint32_t tsval, const CookieOptions& o) {
  uint32_t opts = o.wscale_ok ? (o.snd_wscale & 0xfu) : 0xfu;
  if (o.sack_ok) opts |= 1u << 4;
  if (o.ecn_ok) opts |= 1u << 5;
  uint32_t ts = ((tsval >> kTsBits) << kTsBits) | opts;
  // Never ahead of the clock: a TSval from the future would trip PAWS.
  if (static_cast<int32_t>(ts - tsval) > 0) ts -= 1u << kTsBits;
  return ts;
}

CookieOptions cookie_decode_tsecr(uint32_t tsecr, uint16_t mss) {
  CookieOptions o;
  o.mss = mss;
  o.ts_ok = true;
  const uint32_t opts = tsecr & ((1u << kTsBits) - 1);
  o.sack_ok = (opts & (1u << 4)) != 0;
  o.ecn_ok = (opts & (1u << 5)) != 0;
  const uint32_t ws = opts & 0xfu;
  if (ws != 0xfu && ws <= 14) {
    o.wscale_ok = true;
    o.snd_wscale = static_cast<uint8_t>(ws);
  }
  return o;
}

}  // namespace weir::tcp

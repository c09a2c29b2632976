#include "tcp/isn.h"

#include <array>
#include <cstring>

namespace weir::tcp {
namespace {

constexpr uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct SipState {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
  }
};

// SipHash-2-4 (Aumasson & Bernstein) over whole 64-bit words; the key is
// the driver's secret expanded to 128 bits.
uint64_t siphash(uint64_t secret, const uint64_t* words, size_t n) {
  const uint64_t k0 = secret;
  const uint64_t k1 = secret * 0x9e3779b97f4a7c15ull + 0x5745495221ull;
  SipState s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull,
             k0 ^ 0x6c7967656e657261ull, k1 ^ 0x7465646279746573ull};
  for (size_t i = 0; i < n; ++i) {
    s.v3 ^= words[i];
    s.round();
    s.round();
    s.v0 ^= words[i];
  }
  const uint64_t last = static_cast<uint64_t>(n * 8) << 56;
  s.v3 ^= last;
  s.round();
  s.round();
  s.v0 ^= last;
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
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
  const auto& l = t.local.addr.bytes();
  const auto& r = t.remote.addr.bytes();
  uint64_t w[6] = {load64(l.data()), load64(l.data() + 8), load64(r.data()), load64(r.data() + 8),
                   (uint64_t{t.local.port} << 16) | t.remote.port, extra};
  return siphash(secret, w, 6);
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

// Uses only installed public headers and the installed library.
#include <cstdio>

#include "weir/addr.h"
#include "weir/counters.h"
#include "weir/errors.h"
#include "weir/seq.h"
#include "weir/time.h"

int main() {
  auto a = weir::IpAddr::parse("192.0.2.1");
  auto b = weir::IpAddr::parse("2001:db8::1");
  if (!a || !a->is_v4() || !b || b->is_v4()) return 1;
  weir::Endpoint e{*b, 443};
  if (e.to_string() != "[2001:db8::1]:443") return 2;
  if (weir::seq_len(weir::Seq32(0xfffffff0u), weir::Seq32(16)) != 32) return 3;
  if (weir::counter_name(weir::Counter::TcpInSegs) != "TcpInSegs") return 4;
  if (std::string_view(weir::errc_name(weir::Errc::kAgain)) != "EAGAIN") return 5;
  if ((weir::Time::zero() + weir::Duration::ms(5)).us() != 5000) return 6;
  std::printf("weir consumer ok: %s\n", a->to_string().c_str());
  return 0;
}

// `weir fetch URL`: weir's own HTTP/1.1 client. One GET, the body streamed
// to a file (or discarded), a progress bar on a terminal, and the body's
// SHA-256 at the end (optionally checked against an expected value). A
// tcp:// URL skips HTTP: the connection's whole byte stream is the body.
#pragma once

#include <memory>
#include <string>

#include "driver/app.h"
#include "driver/http.h"

namespace weir::driver {

struct FetchOptions {
  http::Url url;
  std::string output;           // "" or "-": no file, count and hash only
  std::string expect_sha256;    // "" = do not check
  // false: count the bytes only. At veth rates SHA-256 costs more CPU per
  // byte than the stack does, so a receiving benchmark turns it off.
  bool sha256 = true;
  bool progress = false;        // draw a bar on stderr
  Duration timeout = Duration::s(300);
};

std::unique_ptr<App> make_fetch(FetchOptions opt);

}  // namespace weir::driver

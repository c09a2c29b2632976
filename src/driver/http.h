// The HTTP/1.1 pieces `weir serve --app http` and `weir fetch` need (RFC
// 9110 semantics, RFC 9112 message syntax): request and response heads,
// byte ranges, URLs with IP-literal hosts, and mapping a target to a file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weir/addr.h"
#include "weir/expected.h"

namespace weir::driver::http {

struct Head {
  // Request: method, target, version. Response: version, status, reason.
  std::string a, b, c;
  std::vector<std::pair<std::string, std::string>> fields;
  // Case-insensitive field lookup (RFC 9110 §5.1); the first occurrence.
  std::optional<std::string_view> field(std::string_view name) const;
};

// Parses a message head (everything before the blank line, which must not
// be included). Returns the reason on malformed input.
Expected<Head, std::string> parse_head(std::string_view text);

// RFC 9112 §9.3: HTTP/1.1 persists unless "Connection: close"; HTTP/1.0
// only with "Connection: keep-alive".
bool keep_alive(const Head& request_or_response, std::string_view version);

// A single byte range, inclusive at both ends (RFC 9110 §14.1.2).
struct ByteRange {
  uint64_t first = 0, last = 0;
};
enum class RangeResult { kNone, kOk, kUnsatisfiable };
// Interprets a Range field against a representation of `size` bytes. Only
// single ranges are served; other forms are ignored (the whole file is sent,
// which RFC 9110 §14.2 allows).
RangeResult parse_range(std::string_view value, uint64_t size, ByteRange* out);

struct Url {
  IpAddr addr;
  std::string host;  // as written (for the Host field)
  uint16_t port = 80;
  std::string target = "/";
  // "tcp://": no HTTP at all; the whole byte stream is the body, ending at
  // the peer's FIN (a netcat-style sink, e.g. for chargen or `nc -l`).
  bool raw = false;
};
// "http://192.0.2.1:8080/x", "http://[fd00::1]/y"; "tcp://192.0.2.1:19",
// "tcp://[fd00::1]:9000" (a port and no path). Hosts must be IP literals:
// weir has no resolver.
Expected<Url, std::string> parse_url(std::string_view url);

// Maps a request target onto a file under `root`: percent-decodes, drops the
// query, refuses ".." segments and NULs. Empty when refused.
std::optional<std::string> target_to_path(const std::string& root, std::string_view target);

std::string_view reason_phrase(int status);

// RFC 9112 §7.1: the chunked transfer coding, decoded incrementally (bytes
// arrive in arbitrary pieces). Chunk extensions and trailer fields are read
// and ignored (§7.1.1, §7.1.2), as curl does.
class ChunkedDecoder {
 public:
  // Consumes `in`, appending the decoded body bytes to `out`. Returns the
  // number of input bytes used (all of them unless the message ended inside
  // `in`), or the reason the coding is malformed.
  Expected<size_t, std::string> feed(std::string_view in, std::string& out);
  // The last chunk and the trailer section have been read.
  bool done() const { return state_ == State::kDone; }

 private:
  enum class State { kSize, kExt, kSizeLf, kData, kDataCr, kDataLf, kTrailer, kDone };
  State state_ = State::kSize;
  uint64_t left_ = 0;        // bytes of the current chunk still to come
  int digits_ = 0;           // hex digits of the size read so far
  bool trailer_empty_ = true;  // the current trailer line has no characters yet
};

}  // namespace weir::driver::http

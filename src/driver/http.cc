#include "driver/http.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace weir::driver::http {

namespace {

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool parse_u64(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::optional<std::string_view> Head::field(std::string_view name) const {
  for (const auto& [k, v] : fields)
    if (iequal(k, name)) return std::string_view(v);
  return std::nullopt;
}

Expected<Head, std::string> parse_head(std::string_view text) {
  Head h;
  size_t eol = text.find('\n');
  std::string_view start = trim(text.substr(0, eol));
  // RFC 9112 §3: method SP target SP version (or version SP status SP reason).
  size_t s1 = start.find(' ');
  if (s1 == std::string_view::npos) return Unexpected(std::string("no space in start line"));
  size_t s2 = start.find(' ', s1 + 1);
  h.a = std::string(start.substr(0, s1));
  h.b = std::string(start.substr(s1 + 1, s2 == std::string_view::npos ? std::string_view::npos : s2 - s1 - 1));
  if (s2 != std::string_view::npos) h.c = std::string(start.substr(s2 + 1));
  while (eol != std::string_view::npos) {
    size_t next = text.find('\n', eol + 1);
    std::string_view line = trim(text.substr(eol + 1, next == std::string_view::npos ? std::string_view::npos
                                                                                     : next - eol - 1));
    eol = next;
    if (line.empty()) continue;
    size_t colon = line.find(':');
    // RFC 9112 §5.1: no whitespace between the field name and the colon.
    if (colon == std::string_view::npos || colon == 0 || line[colon - 1] == ' ')
      return Unexpected(fmt::format("bad field line '{}'", line));
    h.fields.emplace_back(std::string(line.substr(0, colon)), std::string(trim(line.substr(colon + 1))));
    if (h.fields.size() > 100) return Unexpected(std::string("too many fields"));
  }
  return h;
}

bool keep_alive(const Head& h, std::string_view version) {
  auto c = h.field("Connection");
  if (version == "HTTP/1.0") return c && iequal(*c, "keep-alive");
  return !(c && iequal(*c, "close"));
}

RangeResult parse_range(std::string_view v, uint64_t size, ByteRange* out) {
  v = trim(v);
  if (v.substr(0, 6) != "bytes=") return RangeResult::kNone;
  v.remove_prefix(6);
  if (v.find(',') != std::string_view::npos) return RangeResult::kNone;
  size_t dash = v.find('-');
  if (dash == std::string_view::npos) return RangeResult::kNone;
  std::string_view f = trim(v.substr(0, dash)), l = trim(v.substr(dash + 1));
  uint64_t first = 0, last = 0;
  if (f.empty()) {
    // Suffix range: the last N bytes (RFC 9110 §14.1.2).
    if (!parse_u64(l, &last)) return RangeResult::kNone;
    if (last == 0 || size == 0) return RangeResult::kUnsatisfiable;
    *out = {size - std::min(last, size), size - 1};
    return RangeResult::kOk;
  }
  if (!parse_u64(f, &first)) return RangeResult::kNone;
  if (l.empty()) last = size ? size - 1 : 0;
  else if (!parse_u64(l, &last) || last < first) return RangeResult::kNone;
  if (first >= size) return RangeResult::kUnsatisfiable;
  *out = {first, std::min(last, size - 1)};
  return RangeResult::kOk;
}

Expected<Url, std::string> parse_url(std::string_view s) {
  Url u;
  if (s.substr(0, 6) == "tcp://") {
    u.raw = true;
    s.remove_prefix(6);
  } else if (s.substr(0, 7) == "http://") {
    s.remove_prefix(7);
  } else {
    return Unexpected(std::string("only http:// and tcp:// URLs"));
  }
  size_t slash = s.find('/');
  std::string_view auth = s.substr(0, slash);
  u.target = slash == std::string_view::npos ? "/" : std::string(s.substr(slash));
  std::string_view host = auth, port;
  if (!auth.empty() && auth.front() == '[') {
    size_t rb = auth.find(']');
    if (rb == std::string_view::npos) return Unexpected(std::string("unterminated [IPv6] host"));
    host = auth.substr(1, rb - 1);
    if (rb + 1 < auth.size()) {
      if (auth[rb + 1] != ':') return Unexpected(std::string("junk after ]"));
      port = auth.substr(rb + 2);
    }
  } else if (size_t c = auth.find(':'); c != std::string_view::npos) {
    host = auth.substr(0, c);
    port = auth.substr(c + 1);
  }
  auto ip = IpAddr::parse(host);
  if (!ip) return Unexpected(fmt::format("'{}' is not an IP address (weir has no resolver)", host));
  u.addr = *ip;
  u.host = std::string(auth);
  uint64_t p = 80;
  if (!port.empty() && (!parse_u64(port, &p) || p == 0 || p > 65535))
    return Unexpected(fmt::format("bad port '{}'", port));
  u.port = static_cast<uint16_t>(p);
  // A raw stream has no well-known port and no resource to name.
  if (u.raw && port.empty()) return Unexpected(std::string("tcp:// needs a port"));
  if (u.raw && u.target != "/") return Unexpected(std::string("tcp:// takes no path"));
  return u;
}

std::optional<std::string> target_to_path(const std::string& root, std::string_view target) {
  target = target.substr(0, target.find('?'));
  std::string path;
  for (size_t i = 0; i < target.size(); ++i) {
    char ch = target[i];
    if (ch == '%' && i + 2 < target.size()) {
      unsigned v = 0;
      auto [p, ec] = std::from_chars(target.data() + i + 1, target.data() + i + 3, v, 16);
      if (ec != std::errc() || p != target.data() + i + 3) return std::nullopt;
      ch = static_cast<char>(v);
      i += 2;
    }
    if (ch == '\0') return std::nullopt;
    path += ch;
  }
  if (path.empty() || path[0] != '/') return std::nullopt;
  // Refuse any ".." segment: nothing outside the served directory.
  size_t pos = 0;
  while (pos < path.size()) {
    size_t next = path.find('/', pos + 1);
    std::string_view seg(path.data() + pos + 1, (next == std::string::npos ? path.size() : next) - pos - 1);
    if (seg == "..") return std::nullopt;
    if (next == std::string::npos) break;
    pos = next;
  }
  if (path.back() == '/') path += "index.html";
  return root + path;
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 206: return "Partial Content";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 416: return "Range Not Satisfiable";
    case 431: return "Request Header Fields Too Large";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

// chunked = *chunk last-chunk trailer-section CRLF; chunk = chunk-size
// [ chunk-ext ] CRLF chunk-data CRLF. A bare LF is accepted where CRLF is
// expected (RFC 9112 §2.2 allows a recipient to).
Expected<size_t, std::string> ChunkedDecoder::feed(std::string_view in, std::string& out) {
  size_t i = 0;
  while (i < in.size() && state_ != State::kDone) {
    const char c = in[i];
    switch (state_) {
      case State::kSize: {
        const int v = std::isxdigit(static_cast<unsigned char>(c)) ? (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10) : -1;
        if (v >= 0) {
          if (++digits_ > 15) return Unexpected(std::string("chunk size too large"));
          left_ = left_ * 16 + static_cast<uint64_t>(v);
          ++i;
          break;
        }
        if (digits_ == 0) return Unexpected(std::string("chunk size missing"));
        state_ = c == '\r' ? State::kSizeLf : c == '\n' ? State::kSizeLf : State::kExt;
        if (c == '\n') continue;  // handled as the LF below
        ++i;
        break;
      }
      case State::kExt:  // chunk-ext: skipped up to the line end
        if (c == '\n') state_ = State::kSizeLf;
        else ++i;
        break;
      case State::kSizeLf:
        if (c != '\n') return Unexpected(std::string("chunk size line not ended by CRLF"));
        ++i;
        digits_ = 0;
        state_ = left_ == 0 ? State::kTrailer : State::kData;
        trailer_empty_ = true;
        break;
      case State::kData: {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(left_, in.size() - i));
        out.append(in.substr(i, n));
        i += n;
        left_ -= n;
        if (left_ == 0) state_ = State::kDataCr;
        break;
      }
      case State::kDataCr:
        if (c == '\r') ++i;
        else if (c != '\n') return Unexpected(std::string("chunk data not followed by CRLF"));
        state_ = State::kDataLf;
        break;
      case State::kDataLf:
        if (c != '\n') return Unexpected(std::string("chunk data not followed by CRLF"));
        ++i;
        state_ = State::kSize;
        break;
      case State::kTrailer:  // trailer lines, until an empty one
        ++i;
        if (c == '\n') {
          if (trailer_empty_) state_ = State::kDone;
          trailer_empty_ = true;
        } else if (c != '\r') {
          trailer_empty_ = false;
        }
        break;
      case State::kDone: break;
    }
  }
  return i;
}

}  // namespace weir::driver::http

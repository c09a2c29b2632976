#include "driver/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "weir/addr.h"

extern char** environ;

namespace weir::driver {

Expected<bool, std::string> enter_netns(const std::string& name) {
  std::string path = name.find('/') == std::string::npos ? "/run/netns/" + name : name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unexpected(fmt::format("netns {}: {}", path, std::strerror(errno)));
  int r = ::setns(fd, CLONE_NEWNET);
  int e = errno;
  ::close(fd);
  if (r < 0) return Unexpected(fmt::format("setns {}: {}", path, std::strerror(e)));
  return true;
}

NetnsGuard::NetnsGuard() { fd_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC); }

NetnsGuard::~NetnsGuard() {
  if (fd_ < 0) return;
  ::setns(fd_, CLONE_NEWNET);
  ::close(fd_);
}

int run_program(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  if (::posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Expected<Cidr, std::string> parse_cidr(const std::string& text) {
  Cidr c;
  auto slash = text.find('/');
  c.addr = text.substr(0, slash);
  auto ip = IpAddr::parse(c.addr);
  if (!ip) return Unexpected(fmt::format("'{}' is not an IP address", c.addr));
  c.v6 = !ip->is_v4();
  c.prefix = c.v6 ? 128 : 32;
  if (slash != std::string::npos) {
    const char* b = text.data() + slash + 1;
    const char* e = text.data() + text.size();
    auto [p, ec] = std::from_chars(b, e, c.prefix);
    if (ec != std::errc() || p != e || c.prefix < 0 || c.prefix > (c.v6 ? 128 : 32))
      return Unexpected(fmt::format("bad prefix length in '{}'", text));
  }
  return c;
}

Expected<bool, std::string> configure_kernel_side(const std::string& dev, const std::string& cidr) {
  auto c = parse_cidr(cidr);
  if (!c) return Unexpected(c.error());
  std::string full = fmt::format("{}/{}", c->addr, c->prefix);
  std::vector<std::string> add{"ip", c->v6 ? "-6" : "-4", "addr", "add", full, "dev", dev};
  // Duplicate address detection would hold the address "tentative" (unusable)
  // for a second; a point-to-point TUN has nobody to collide with.
  if (c->v6) add.push_back("nodad");
  if (run_program(add) != 0) return Unexpected(fmt::format("ip addr add {} dev {} failed", full, dev));
  if (run_program({"ip", "link", "set", dev, "up"}) != 0)
    return Unexpected(fmt::format("ip link set {} up failed", dev));
  return true;
}

}  // namespace weir::driver

#include "driver/ether_setup.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdio>

#include <fmt/format.h>

namespace weir::driver {

MacBytes derived_mac(const MacBytes& iface) {
  MacBytes m = iface;
  m[0] = static_cast<uint8_t>(((iface[0] ^ 0x04) | 0x02) & ~0x01);
  return m;
}

namespace {

// An ordinary socket for interface ioctls, closed on scope exit.
struct IoctlSocket {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ~IoctlSocket() {
    if (fd >= 0) ::close(fd);
  }
};

void set_feature(int s, const std::string& ifname, uint32_t cmd) {
  ethtool_value v{cmd, 0};
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = reinterpret_cast<char*>(&v);
  (void)::ioctl(s, SIOCETHTOOL, &ifr);
}

}  // namespace

Expected<MacBytes, std::string> iface_mac(const std::string& ifname) {
  IoctlSocket s;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  if (s.fd < 0 || ::ioctl(s.fd, SIOCGIFHWADDR, &ifr) < 0)
    return Unexpected(fmt::format("{}: {}", ifname, std::strerror(errno)));
  if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) return Unexpected(fmt::format("{} is not an Ethernet interface", ifname));
  MacBytes m;
  std::memcpy(m.data(), ifr.ifr_hwaddr.sa_data, 6);
  return m;
}

void offloads_off(const std::string& ifname) {
  IoctlSocket s;
  if (s.fd < 0) return;
  for (uint32_t cmd : {ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO}) set_feature(s.fd, ifname, cmd);
}

// The peer as iproute2 shows it: `ip -o link show dev IF` prints
// "N: IF@PEER: ..." and, when the peer lives in another namespace, PEER as
// "ifK" with "link-netns"/"link-netnsid" after it. Not /sys/class/net:
// sysfs shows the namespace of whoever mounted it, not this thread's
// (which `--netns` moved); a child process inherits the thread's.
Expected<std::string, std::string> veth_peer(const std::string& ifname) {
  auto fail = [&] {
    return Unexpected(fmt::format(
        "--peer with --packet {} needs {} to be one end of a veth pair whose other end is in the same namespace",
        ifname, ifname));
  };
  if (ifname.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != std::string::npos)
    return fail();
  FILE* f = ::popen(("ip -o link show dev " + ifname + " 2>/dev/null").c_str(), "r");
  if (!f) return fail();
  char buf[1024] = {};
  const bool got = std::fgets(buf, sizeof buf, f) != nullptr;
  ::pclose(f);
  const std::string line = got ? buf : "";
  const auto at = line.find(ifname + "@");
  if (at == std::string::npos || line.find("link-netns") != std::string::npos) return fail();
  const auto from = at + ifname.size() + 1;
  const auto colon = line.find(':', from);
  if (colon == std::string::npos) return fail();
  std::string peer = line.substr(from, colon - from);
  if (peer.empty() || ::if_nametoindex(peer.c_str()) == 0) return fail();
  return peer;
}

Expected<bool, std::string> link_up(const std::string& ifname) {
  IoctlSocket s;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  if (s.fd < 0 || ::ioctl(s.fd, SIOCGIFFLAGS, &ifr) < 0)
    return Unexpected(fmt::format("{}: {}", ifname, std::strerror(errno)));
  if (ifr.ifr_flags & IFF_UP) return true;
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  if (::ioctl(s.fd, SIOCSIFFLAGS, &ifr) < 0) return Unexpected(fmt::format("{} up: {}", ifname, std::strerror(errno)));
  return true;
}

}  // namespace weir::driver

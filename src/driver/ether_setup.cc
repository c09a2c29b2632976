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
#include <fstream>

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

int read_int(const std::string& path) {
  std::ifstream f(path);
  int v = -1;
  f >> v;
  return f ? v : -1;
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

// /sys/class/net/IF/iflink is the peer's ifindex in the peer's namespace;
// an index that names an interface here could be a stranger's, so the
// answer counts only if that interface's iflink points back at us.
Expected<std::string, std::string> veth_peer(const std::string& ifname) {
  const std::string sys = "/sys/class/net/";
  const int self = read_int(sys + ifname + "/ifindex");
  const int link = read_int(sys + ifname + "/iflink");
  char name[IF_NAMESIZE] = {};
  if (self > 0 && link > 0 && link != self && ::if_indextoname(static_cast<unsigned>(link), name) &&
      read_int(sys + name + "/iflink") == self)
    return std::string(name);
  return Unexpected(fmt::format(
      "--peer with --packet {} needs {} to be one end of a veth pair whose other end is in the same namespace", ifname,
      ifname));
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

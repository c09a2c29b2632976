// The calling thread in a network namespace of its own, for tests that
// need a real veth pair: entered at construction when running as root
// (unshare(CLONE_NEWNET); the namespace goes with its last reference, so
// nothing outlives the test), and the thread's own namespace restored at
// destruction. Without root, entered() is false and the test skips.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <string>

namespace weir::link::test {

class PrivateNetns {
 public:
  PrivateNetns() {
    if (::geteuid() != 0) return;
    home_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    entered_ = home_ >= 0 && ::unshare(CLONE_NEWNET) == 0;
  }
  ~PrivateNetns() {
    if (entered_) (void)::setns(home_, CLONE_NEWNET);
    if (home_ >= 0) ::close(home_);
  }
  PrivateNetns(const PrivateNetns&) = delete;
  PrivateNetns& operator=(const PrivateNetns&) = delete;
  bool entered() const { return entered_; }

 private:
  int home_ = -1;
  bool entered_ = false;
};

// Writes a one-character /proc/sys value (inside the namespace: its own copy).
inline void write_sysctl(const std::string& path, const char* v) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd >= 0) (void)!::write(fd, v, 1), ::close(fd);
}

}  // namespace weir::link::test

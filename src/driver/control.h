// The control socket of a running `weir serve`: a unix stream socket on which
// `weir ss` writes one command line ("ss", "nstat", ...) and reads the
// answer until EOF. Served from the driver thread, so the answer is a
// consistent snapshot and the stack needs no lock.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "driver/reactor.h"
#include "weir/expected.h"

namespace weir::driver {

class ControlServer {
 public:
  using Render = std::function<std::string(const std::string& command)>;
  static Expected<std::unique_ptr<ControlServer>, std::string> open(const std::string& path, Reactor& rx,
                                                                    Render render);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

 private:
  ControlServer(std::string path, int fd, Reactor& rx, Render r)
      : path_(std::move(path)), fd_(fd), rx_(rx), render_(std::move(r)) {}
  void on_accept();

  std::string path_;
  int fd_;
  Reactor& rx_;
  Render render_;
};

// The client side, for `weir ss`: sends `command`, returns the answer.
Expected<std::string, std::string> control_query(const std::string& path, const std::string& command);

// Where `serve --tun NAME` listens unless told otherwise.
std::string default_control_path(const std::string& tun);

}  // namespace weir::driver

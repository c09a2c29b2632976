// The `weir` command: lab, sim, pkt and the real-network drivers.
#include <cstdio>
#include <map>

#include "command.h"

namespace weir::cli {
std::vector<Command>& registry() {
  static std::vector<Command> r;
  return r;
}
}  // namespace weir::cli

int main(int argc, char** argv) {
  CLI::App app{"weir: a userspace TCP/IP stack, its network lab and packetdrill runner"};
  app.require_subcommand(1);
  std::map<CLI::App*, std::function<int()>> runners;
  for (auto& c : weir::cli::registry()) {
    CLI::App* sub = app.add_subcommand(c.name);
    runners[sub] = c.setup(*sub);
  }
  CLI11_PARSE(app, argc, argv);
  for (auto& [sub, run] : runners)
    if (sub->parsed()) return run();
  return 2;
}

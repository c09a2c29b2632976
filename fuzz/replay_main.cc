// A main() for builds without libFuzzer (GCC, or any build): runs a fuzz
// target's LLVMFuzzerTestOneInput over every file of the directories or
// files given, so each seed corpus is replayed by ctest in every build
// (tests/fuzz.cmake: fuzz_replay_<name>). A crash or abort fails the test.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

size_t run_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replay %s (%zu bytes)\n", p.c_str(), data.size());
  LLVMFuzzerTestOneInput(data.data(), data.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  size_t files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::directory_iterator(arg)) {
        if (e.is_regular_file()) files += run_file(e.path());
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      files += run_file(arg);
    } else {
      std::fprintf(stderr, "no such file or directory: %s\n", argv[i]);
      return 2;
    }
  }
  std::printf("replayed %zu inputs\n", files);
  // An empty corpus is a configuration mistake, not a pass.
  return files > 0 ? 0 : 1;
}

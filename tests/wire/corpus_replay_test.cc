// Replays the libFuzzer seed corpus (fuzz/corpus/wire) through the fuzz
// target's checks in every build, so the corpus and the invariants stay live
// even where no fuzz build exists.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "../../fuzz/wire_fuzz_check.h"

namespace weir::wire {
namespace {

TEST(WireCorpus, EverySeedPassesTheFuzzChecks) {
  std::filesystem::path dir = WEIR_SOURCE_DIR "/fuzz/corpus/wire";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  size_t files = 0, accepted = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(entry.path().string());
    if (fuzz::check_wire_input(data) > 0) ++accepted;  // aborts on a broken invariant
    ++files;
  }
  EXPECT_GE(files, 8u);
  // The seeds are mostly valid packets, so the replay reaches deep code.
  EXPECT_GE(accepted, files / 2);
}

}  // namespace
}  // namespace weir::wire

// The RCC_* registry and docs/configuration.md list the same settings with the same defaults, and
// settings parse strictly: a value a setting does not accept is an error naming it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/settings.h"
#include "base/status.h"

namespace {

std::string read_docs() {
  std::ifstream in(RCC_SOURCE_DIR "/docs/configuration.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Config, EverySettingIsDocumentedWithItsDefault) {
  const std::string docs = read_docs();
  ASSERT_FALSE(docs.empty()) << "docs/configuration.md is missing";
  for (const rcc::settings::Setting& setting : rcc::settings::all()) {
    const std::string row = std::string("| `") + setting.name + "` | " +
                            (setting.default_value[0] ? std::string("`") + setting.default_value + "`" : "(unset)") +
                            " |";
    EXPECT_NE(docs.find(row), std::string::npos) << "docs/configuration.md lacks the row starting " << row;
  }
}

TEST(Config, EveryDocumentedSettingExists) {
  const std::string docs = read_docs();
  size_t at = 0;
  while ((at = docs.find("| `RCC_", at)) != std::string::npos) {
    size_t end = docs.find('`', at + 3);
    const std::string name = docs.substr(at + 3, end - at - 3);
    bool known = false;
    for (const rcc::settings::Setting& setting : rcc::settings::all()) known |= name == setting.name;
    EXPECT_TRUE(known) << name << " is documented but not in the registry (src/base/settings.cc)";
    at = end;
  }
}

TEST(Config, MalformedIntegerIsAnErrorNamingTheVariable) {
  setenv("RCC_TIMEOUT", "12x", 1);
  int64_t value = 0;
  EXPECT_EQ(rcc::settings::integer("RCC_TIMEOUT", &value), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(rcc::last_error().find("RCC_TIMEOUT='12x'"), std::string::npos) << rcc::last_error();
  EXPECT_EQ(value, 0);  // output untouched on failure
  setenv("RCC_TIMEOUT", "7", 1);
  ASSERT_EQ(rcc::settings::integer("RCC_TIMEOUT", &value), RCC_SUCCESS);
  EXPECT_EQ(value, 7);
  unsetenv("RCC_TIMEOUT");
  ASSERT_EQ(rcc::settings::integer("RCC_TIMEOUT", &value), RCC_SUCCESS);
  EXPECT_EQ(value, 60);
}

TEST(Settings, RangesAndChoicesAreCheckedInOnePlaceWithOneMessageShape) {
  int64_t value = 1;
  setenv("RCC_EAGER_SLOTS", "6", 1);  // not a multiple of 4
  EXPECT_EQ(rcc::settings::integer("RCC_EAGER_SLOTS", &value), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rcc::last_error(), "RCC_EAGER_SLOTS='6' is not an integer in [4, 4096], a multiple of 4");
  EXPECT_EQ(value, 1);
  setenv("RCC_EAGER_SLOTS", "8192", 1);  // out of range
  EXPECT_EQ(rcc::settings::integer("RCC_EAGER_SLOTS", &value), RCC_ERR_INVALID_ARGUMENT);
  unsetenv("RCC_EAGER_SLOTS");
  std::string choice;
  setenv("RCC_TRANSPORT", "UCX", 1);  // choices ignore case and come back as registered
  ASSERT_EQ(rcc::settings::choice("RCC_TRANSPORT", &choice), RCC_SUCCESS);
  EXPECT_EQ(choice, "ucx");
  setenv("RCC_TRANSPORT", "tcp", 1);
  EXPECT_EQ(rcc::settings::choice("RCC_TRANSPORT", &choice), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rcc::last_error(), "RCC_TRANSPORT='tcp' is not auto, verbs or ucx");
  unsetenv("RCC_TRANSPORT");
  std::optional<int64_t> spins = 5;
  ASSERT_EQ(rcc::settings::auto_or_integer("RCC_SPIN_COUNT", &spins), RCC_SUCCESS);
  EXPECT_FALSE(spins.has_value());
  setenv("RCC_SPIN_COUNT", "0", 1);
  EXPECT_EQ(rcc::settings::auto_or_integer("RCC_SPIN_COUNT", &spins), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rcc::last_error(), "RCC_SPIN_COUNT='0' is not auto or a poll count in [1, 1073741824]");
  unsetenv("RCC_SPIN_COUNT");
  std::optional<std::vector<std::string>> list;
  setenv("RCC_EAGER_ENCODINGS", "headed,bare", 1);
  ASSERT_EQ(rcc::settings::auto_or_list("RCC_EAGER_ENCODINGS", &list), RCC_SUCCESS);
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(*list, (std::vector<std::string>{"headed", "bare"}));
  setenv("RCC_EAGER_ENCODINGS", "headed,headed", 1);
  EXPECT_EQ(rcc::settings::auto_or_list("RCC_EAGER_ENCODINGS", &list), RCC_ERR_INVALID_ARGUMENT);
  unsetenv("RCC_EAGER_ENCODINGS");
}

// Init checks every set value before it talks to any rank (so each rank reports the setting itself).
TEST(Settings, CheckAllFindsAMalformedValueOfAnyKind) {
  EXPECT_EQ(rcc::settings::check_all(), RCC_SUCCESS);
  const char* bad[][2] = {{"RCC_TIMEOUT", "soon"},
                          {"RCC_SPIN_COUNT", "fast"},
                          {"RCC_TRANSPORT", "tcp"},
                          {"RCC_EAGER_ENCODINGS", "headed,zip"}};
  for (const auto& row : bad) {
    setenv(row[0], row[1], 1);
    EXPECT_EQ(rcc::settings::check_all(), RCC_ERR_INVALID_ARGUMENT) << row[0];
    EXPECT_EQ(rcc::last_error().rfind(std::string(row[0]) + "='" + row[1] + "'", 0), 0u) << rcc::last_error();
    unsetenv(row[0]);
  }
  setenv("RCC_ALGO", "allreduce=anything", 1);  // free text is parsed where it is used
  EXPECT_EQ(rcc::settings::check_all(), RCC_SUCCESS);
  unsetenv("RCC_ALGO");
}

// RCC_ALGO and RCC_CHECK are read on every call without getenv's search while the environment is
// unchanged: every way a program changes it is seen at the next read, on this thread and another.
TEST(Settings, PerCallReadsSeeEveryChangeOfTheEnvironment) {
  const rcc::settings::Setting& algo = rcc::settings::find("RCC_ALGO");
  const rcc::settings::Setting& check = rcc::settings::find("RCC_CHECK");
  unsetenv("RCC_ALGO");
  EXPECT_STREQ(rcc::settings::per_call(algo), "");
  EXPECT_STREQ(rcc::settings::per_call(check), "0");
  setenv("RCC_ALGO", "allreduce:ring", 1);
  EXPECT_STREQ(rcc::settings::per_call(algo), "allreduce:ring");
  setenv("RCC_ALGO", "allreduce:tree", 1);  // replaced in place in the array
  EXPECT_STREQ(rcc::settings::per_call(algo), "allreduce:tree");
  setenv("RCC_ALGO", "allreduce:ring", 1);  // glibc hands back the first string's address
  EXPECT_STREQ(rcc::settings::per_call(algo), "allreduce:ring");
  setenv("RCC_CHECK", "1", 1);  // another entry, appended: the array may move
  EXPECT_STREQ(rcc::settings::per_call(check), "1");
  EXPECT_STREQ(rcc::settings::per_call(algo), "allreduce:ring");
  static char entry[] = "RCC_ALGO=broadcast:tree";
  putenv(entry);
  EXPECT_STREQ(rcc::settings::per_call(algo), "broadcast:tree");
  entry[sizeof "RCC_ALGO=broadcast:" - 1] = 'p';  // edited in place: read through the entry
  EXPECT_STREQ(rcc::settings::per_call(algo), "broadcast:pree");
  // Many variables later (a launcher's environment), and removals before and after the entry.
  for (int i = 0; i < 64; ++i) setenv(("RCC_TEST_FILLER_" + std::to_string(i)).c_str(), "x", 1);
  EXPECT_STREQ(rcc::settings::per_call(algo), "broadcast:pree");
  unsetenv("RCC_TEST_FILLER_0");
  setenv("RCC_ALGO", "allgather:ring", 1);
  EXPECT_STREQ(rcc::settings::per_call(algo), "allgather:ring");
  // Absent, then one entry removed and the name added: as many entries as before.
  unsetenv("RCC_ALGO");
  EXPECT_STREQ(rcc::settings::per_call(algo), "");
  unsetenv("RCC_TEST_FILLER_1");
  setenv("RCC_ALGO", "reduce:tree", 1);
  EXPECT_STREQ(rcc::settings::per_call(algo), "reduce:tree");
  // Present, then removed and another name added: as many entries, the name gone.
  unsetenv("RCC_ALGO");
  setenv("RCC_TEST_FILLER_1", "x", 1);
  EXPECT_STREQ(rcc::settings::per_call(algo), "");
  // Present, then an earlier entry removed (it moves down) and then the name itself removed.
  setenv("RCC_ALGO", "scan:rd", 1);
  EXPECT_STREQ(rcc::settings::per_call(algo), "scan:rd");
  unsetenv("RCC_TEST_FILLER_2");
  EXPECT_STREQ(rcc::settings::per_call(algo), "scan:rd");
  unsetenv("RCC_ALGO");
  EXPECT_STREQ(rcc::settings::per_call(algo), "");
  setenv("RCC_ALGO", "allgather:ring", 1);
  EXPECT_STREQ(rcc::settings::per_call(algo), "allgather:ring");
  // Absent, then the last entry removed and set again after the name was added and another
  // removed: glibc hands back the last entry's string, and the array's length is the same.
  unsetenv("RCC_ALGO");
  setenv("RCC_TEST_LAST", "1", 1);
  EXPECT_STREQ(rcc::settings::per_call(algo), "");
  unsetenv("RCC_TEST_LAST");
  setenv("RCC_ALGO", "allreduce:ring", 1);
  unsetenv("RCC_TEST_FILLER_3");
  setenv("RCC_TEST_LAST", "1", 1);
  EXPECT_STREQ(rcc::settings::per_call(algo), "allreduce:ring");
  unsetenv("RCC_TEST_LAST");
  setenv("RCC_ALGO", "allgather:ring", 1);
  EXPECT_STREQ(rcc::settings::per_call(algo), "allgather:ring");
  std::string on_other_thread;
  std::thread([&] { on_other_thread = rcc::settings::per_call(algo); }).join();
  EXPECT_EQ(on_other_thread, "allgather:ring");
  unsetenv("RCC_ALGO");
  EXPECT_STREQ(rcc::settings::per_call(algo), "");
  unsetenv("RCC_CHECK");
  EXPECT_STREQ(rcc::settings::per_call(check), "0");
  for (int i = 0; i < 64; ++i) unsetenv(("RCC_TEST_FILLER_" + std::to_string(i)).c_str());
}

TEST(Settings, DocsAreGeneratedFromTheRegistry) {
  EXPECT_EQ(read_docs(), rcc::settings::markdown()) << "docs/configuration.md is stale: run scripts/gen-config-doc.sh";
}

}  // namespace

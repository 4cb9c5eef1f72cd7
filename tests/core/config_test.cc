// The RCC_* registry and docs/configuration.md list the same settings with the same defaults, and
// settings parse strictly.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/config.h"
#include "core/status.h"

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
  for (const rcc::config::Setting& setting : rcc::config::all_settings()) {
    const std::string row = std::string("| `") + setting.name + "` | " +
                            (setting.default_value[0] ? std::string("`") + setting.default_value + "`" : "(unset)") + " |";
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
    for (const rcc::config::Setting& setting : rcc::config::all_settings()) known |= name == setting.name;
    EXPECT_TRUE(known) << name << " is documented but not in the registry (src/core/config.cc)";
    at = end;
  }
}

TEST(Config, MalformedIntegerIsAnErrorNamingTheVariable) {
  setenv("RCC_TIMEOUT", "12x", 1);
  int64_t value = 0;
  EXPECT_EQ(rcc::config::get_int("RCC_TIMEOUT", &value), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(rcc::last_error().find("RCC_TIMEOUT='12x'"), std::string::npos) << rcc::last_error();
  EXPECT_EQ(value, 0);  // output untouched on failure
  setenv("RCC_TIMEOUT", "7", 1);
  ASSERT_EQ(rcc::config::get_int("RCC_TIMEOUT", &value), RCC_SUCCESS);
  EXPECT_EQ(value, 7);
  unsetenv("RCC_TIMEOUT");
  EXPECT_EQ(rcc::config::get_int_or_default("RCC_TIMEOUT"), 60);
}

}  // namespace

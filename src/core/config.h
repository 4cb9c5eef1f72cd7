// The one registry of RCC_* environment settings. Every setting rcc reads is declared in
// config.cc with its default and meaning; docs/configuration.md lists the same table (a test
// keeps the two equal). Reading a name that is not registered is a programming error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace rcc::config {

struct Setting {
  const char* name;
  const char* default_value;  // "" means unset
  const char* meaning;
};

const std::vector<Setting>& all_settings();

// The value from the environment, or the registered default.
std::string get_string(const char* name);
// Parses an integer setting; a malformed value is an RCC_ERR_INVALID_ARGUMENT naming the variable.
Status get_int(const char* name, int64_t* value);
// Like get_int but falls back to the default (with a warning) on a malformed value.
int64_t get_int_or_default(const char* name);
bool is_set(const char* name);

// For settings read on every call (collectives read RCC_ALGO and RCC_CHECK each time, so a change
// takes effect at once): look the setting up once, then read its value without allocating.
const Setting& setting(const char* name);
const char* value_of(const Setting& setting);

}  // namespace rcc::config

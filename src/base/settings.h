// The one registry of RCC_* environment settings: each row says its type, default, what values it
// accepts and one line of documentation (settings.cc). Parsing and range checks happen here only,
// with one message shape: "NAME='value' is not ALLOWED", where ALLOWED is what the row accepts.
// docs/configuration.md is generated from the table (a test keeps the two equal). Reading a name
// that is not registered is a programming error (the process aborts naming it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace rcc::settings {

enum class Kind {
  kInteger,        // an integer in [min, max], a multiple of `multiple`
  kAutoOrInteger,  // "auto", or an integer as above
  kChoice,         // one of `choices` (a comma-separated list; matched ignoring case)
  kAutoOrList,     // "auto", or a comma-separated list of some of `choices` (each at most once)
  kText,           // free text, parsed by the one place that uses it (RCC_ALGO, host names...)
};

struct Setting {
  const char* name;
  Kind kind;
  const char* default_value;  // "" means unset
  const char* doc;
  int64_t min = 0;
  int64_t max = 0;
  int64_t multiple = 1;
  const char* choices = "";         // kChoice
  const char* noun = "an integer";  // what a number is, in messages ("a poll count")
};

const std::vector<Setting>& all();
const Setting& find(const char* name);

// What the setting accepts, as the messages and the docs say it: "auto, 0 or 1", "an integer in
// [1024, 67108864]", "auto or a poll count in [1, 1073741824]".
std::string allowed(const Setting& setting);

// Typed reads of the environment's value, or the default when unset. A value the setting does not
// accept is RCC_ERR_INVALID_ARGUMENT: "NAME='value' is not ALLOWED". Outputs are set on success only.
Status integer(const char* name, int64_t* out);
Status auto_or_integer(const char* name, std::optional<int64_t>* out);                // nullopt: auto
Status choice(const char* name, std::string* out);                                    // the registered spelling
Status auto_or_list(const char* name, std::optional<std::vector<std::string>>* out);  // nullopt: auto
std::string text(const char* name);
bool is_set(const char* name);

// Every typed setting the environment sets, parsed: the first one not accepted is the error. Run
// before a rank talks to any other, so that each rank fails with the setting's own message instead
// of some only learning that a peer left the rendezvous.
Status check_all();

// The value (environment or default) without allocating. Look the row up once.
const char* raw(const Setting& setting);
// The same for the few settings read on every call (RCC_ALGO, RCC_CHECK: a change by setenv,
// putenv or unsetenv takes effect at the next call), without getenv's search while the
// environment's entries are the ones of the last call on this thread.
const char* per_call(const Setting& setting);

// docs/configuration.md.
std::string markdown();

}  // namespace rcc::settings

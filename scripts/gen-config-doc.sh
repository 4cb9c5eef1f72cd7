#!/usr/bin/env bash
# Writes docs/configuration.md from the settings registry (src/base/settings.cc): run after adding
# or changing a row. Builds the small printer in BUILD (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target settings_doc >/dev/null
"$build/tests/base/settings_doc" > docs/configuration.md
echo "docs/configuration.md: $(grep -c '^| `RCC_' docs/configuration.md) settings"

#pragma once
// The CPU fallback's policy and report (TORCH_FOO_FALLBACK, torch_foo.fallback_report()).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace foo::native {

enum class FallbackPolicy { Warn, Silent, Error };

FallbackPolicy fallback_policy();             // from TORCH_FOO_FALLBACK until set
void set_fallback_policy(const std::string& name);  // "warn" | "silent" | "error"
std::string fallback_policy_name();

// Each op that fell back, with how many times, sorted by name.
std::vector<std::pair<std::string, int64_t>> fallback_report();
void reset_fallback_report();

}  // namespace foo::native

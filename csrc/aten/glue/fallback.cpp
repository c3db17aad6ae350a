// The boxed CPU fallback for every op not in the manifest: arguments go to the CPU, the CPU
// kernel runs, results (and mutated arguments) come back. Ops whose meaning the round trip would
// break are refused with an error naming the op: views (the CPU result cannot alias foo memory),
// factories (no foo argument to tell where results belong) and random ops (they would draw from
// the CPU generator, not foo's, so manual_seed on foo would not reproduce them).
#include "aten/glue/fallback.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

namespace foo::native {
namespace {

struct State {
  std::mutex mutex;
  std::optional<FallbackPolicy> policy;
  std::map<std::string, int64_t> counts;
  std::set<std::string> warned;
};
State& state() {
  static auto* s = new State();  // leaked: ops may run during interpreter shutdown
  return *s;
}

FallbackPolicy parse_policy(const std::string& name, const char* source) {
  if (name == "warn") return FallbackPolicy::Warn;
  if (name == "silent") return FallbackPolicy::Silent;
  if (name == "error") return FallbackPolicy::Error;
  TORCH_CHECK(false, source, ": unknown CPU fallback policy '", name, "'; use warn, silent or error");
}

FallbackPolicy policy_locked(State& s) {
  if (!s.policy) {
    const char* env = std::getenv("TORCH_FOO_FALLBACK");
    s.policy = (env && *env) ? parse_policy(env, "TORCH_FOO_FALLBACK") : FallbackPolicy::Warn;
  }
  return *s.policy;
}

std::string full_name(const c10::OperatorHandle& op) {
  const auto& name = op.schema().operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

bool is_tensor_type(const c10::TypePtr& type) {
  if (type->kind() == c10::TypeKind::OptionalType) return is_tensor_type(type->castRaw<c10::OptionalType>()->getElementType());
  if (type->kind() == c10::TypeKind::ListType) return is_tensor_type(type->castRaw<c10::ListType>()->getElementType());
  return type->kind() == c10::TypeKind::TensorType;
}

// Why the fallback cannot serve this op, or nullptr when it can.
const char* refusal(const c10::OperatorHandle& op) {
  const auto& schema = op.schema();
  for (const auto& ret : schema.returns()) {
    if (ret.alias_info() && !ret.alias_info()->isWrite()) return "it is a view op (its result must alias foo memory)";
  }
  if (op.hasTag(at::Tag::nondeterministic_seeded)) {
    return "it is a random op (on the CPU it would draw from the CPU generator, not foo's)";
  }
  bool has_tensor = false;
  for (const auto& arg : schema.arguments()) has_tensor = has_tensor || is_tensor_type(arg.type());
  if (!has_tensor) return "it is a factory op (no foo argument says where its result belongs)";
  return nullptr;
}

// cpu_fallback moves every tensor to the CPU without asking where it came from; do what a
// native kernel would: refuse foo tensors from two devices, and full-size CPU tensors.
void check_devices(const std::string& name, const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  const auto num_args = op.schema().arguments().size();
  std::optional<c10::Device> foo_device;
  auto visit = [&](const at::Tensor& t, const std::string& arg) {
    if (!t.defined()) return;
    if (t.device().type() == c10::DeviceType::PrivateUse1) {
      TORCH_CHECK(!foo_device || *foo_device == t.device(), name,
                  ": Expected all tensors to be on the same device, but found at least two devices, ", *foo_device,
                  " and ", t.device(), "! (argument '", arg, "' is on ", t.device(), ")");
      foo_device = t.device();
    } else {
      TORCH_CHECK(t.device().is_cpu() && t.dim() == 0, name, ": Expected all tensors to be on the same device, but argument '",
                  arg, "' is on ", t.device(), " (foo ops take foo tensors; a CPU tensor only as a 0-dim scalar)");
    }
  };
  for (size_t i = 0; i < num_args; ++i) {
    const auto& value = stack[stack.size() - num_args + i];
    const auto& arg = op.schema().arguments()[i].name();
    if (value.isTensor()) visit(value.toTensor(), arg);
    else if (value.isTensorList()) for (const auto& t : value.toTensorVector()) visit(t, arg);
    else if (value.isOptionalTensorList()) {
      for (const std::optional<at::Tensor> t : value.toOptionalTensorList()) if (t) visit(*t, arg);
    }
  }
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto name = full_name(op);
  if (const char* why = refusal(op)) {
    TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: ", name, " is not implemented on the foo device, and the CPU fallback ",
                                "cannot run it: ", why, ". Add it to yaml/ops.yaml with a kernel.");
  }
  bool warn = false;
  {
    auto& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto policy = policy_locked(s);
    TORCH_CHECK_NOT_IMPLEMENTED(policy != FallbackPolicy::Error, "foo: ", name,
                                " is not implemented on the foo device and TORCH_FOO_FALLBACK=error forbids "
                                "the CPU fallback. Add it to yaml/ops.yaml with a kernel.");
    s.counts[name]++;
    warn = policy == FallbackPolicy::Warn && s.warned.insert(name).second;
  }
  check_devices(name, op, *stack);
  if (warn) {
    TORCH_WARN("foo: ", name, " is not implemented on the foo device; running it on the CPU (slow). "
               "torch_foo.fallback_report() lists such ops; TORCH_FOO_FALLBACK=silent hides this warning.");
  }
  at::native::cpu_fallback(op, stack);
}

}  // namespace

FallbackPolicy fallback_policy() {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return policy_locked(s);
}

void set_fallback_policy(const std::string& name) {
  const auto policy = parse_policy(name, "set_fallback_policy");
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.policy = policy;
  s.warned.clear();
}

std::string fallback_policy_name() {
  switch (fallback_policy()) {
    case FallbackPolicy::Warn: return "warn";
    case FallbackPolicy::Silent: return "silent";
    case FallbackPolicy::Error: return "error";
  }
  return "warn";
}

std::vector<std::pair<std::string, int64_t>> fallback_report() {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return {s.counts.begin(), s.counts.end()};
}

void reset_fallback_report() {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.counts.clear();
  s.warned.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

}  // namespace foo::native

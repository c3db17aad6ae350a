#pragma once
// Sim-only fast paths: kernels the sim target launches where cuda launches another, because the
// host runs them faster (gemm_tile.cuh's barrier-free panel products, softmax.cu's rows as warps).
// Each computes what cuda's kernel computes, bit for bit. Switched off, sim launches exactly what
// cuda launches, so cuda's kernels are run on sim for the same inputs: the generated op tests of
// the entries whose manifest says `sim_only_path` run once more that way (tests/ops/test_ops.py,
// test_cuda_paths_*), and tests/test_gemm.py pins the tiled GEMM.
//
// On by default; TORCH_FOO_SIM_ONLY_PATHS=0 turns them off for a process (read once, at the first
// launch that asks), torch_foo.set_sim_only_paths(False) at run time. Asked by host launchers
// only, never inside a kernel; the cuda target has no such paths.
namespace foo::sim {

// Throws std::runtime_error for a TORCH_FOO_SIM_ONLY_PATHS other than 0 or 1.
bool sim_only_paths();
void set_sim_only_paths(bool enabled) noexcept;

}  // namespace foo::sim

"""The elementwise kernel's divider (csrc/kernels/core/int_divider.h) against `/` and `%`: the
header is plain C++, compiled here by itself with the host compiler and run over divisors and
dividends at the edges of its range (every divisor to 4096, powers of two and their neighbours up
to 2^31 - 1, random ones; dividends 0, d - 1, d, d + 1, the last multiple of d below 2^31, 2^31 - 1
and random ones). A wrong quotient anywhere would send an element to another element's address."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHECK = r"""
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/core/int_divider.h"

int main() {
  std::mt19937_64 random(7);
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 4096; ++d) divisors.push_back(d);
  for (int k = 12; k < 31; ++k) {
    for (int64_t e = -1; e <= 1; ++e) divisors.push_back(static_cast<uint32_t>((int64_t{1} << k) + e));
  }
  divisors.push_back(0x7fffffffu);
  for (int i = 0; i < 20000; ++i) divisors.push_back(1 + static_cast<uint32_t>(random() % 0x7fffffffu));
  const uint32_t kLast = 0x7fffffffu;  // the largest dividend of 32-bit indexing
  long checked = 0;
  for (uint32_t d : divisors) {
    const foo::kernels::IntDivider32 divider(d);
    std::vector<uint32_t> dividends = {0, 1, d - 1, d, d + 1, kLast / d * d, kLast / d * d - 1, kLast, kLast - 1};
    for (int i = 0; i < 64; ++i) dividends.push_back(static_cast<uint32_t>(random() % (uint64_t{kLast} + 1)));
    for (uint32_t n : dividends) {
      if (n > kLast) continue;
      ++checked;
      if (divider.divide(n) != n / d) {
        std::printf("wrong: %u / %u gave %u, not %u\n", n, d, divider.divide(n), n / d);
        return 1;
      }
    }
  }
  std::printf("checked %ld quotients\n", checked);
  return 0;
}
"""


def test_divider_quotients_match_division(tmp_path):
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("no host C++ compiler")
    source = tmp_path / "check.cpp"
    source.write_text(CHECK)
    binary = tmp_path / "check"
    subprocess.run([compiler, "-std=c++17", "-O2", "-I", str(ROOT / "csrc"), str(source), "-o", str(binary)],
                   check=True, capture_output=True, text=True)
    result = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checked" in result.stdout and int(result.stdout.split()[1]) > 1_500_000, result.stdout

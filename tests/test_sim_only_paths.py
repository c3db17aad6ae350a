"""The switch between the sim's fast paths and the kernels cuda launches (csrc/sim/fast_paths.h):
on by default, off through the environment for a process or torch_foo.set_sim_only_paths at run
time, a bad value refused by name. What each path computes is compared with its cuda twin in
tests/test_softmax.py, tests/test_gemm.py and the generated test_cuda_paths_* cases."""

import pytest
import torch

import torch_foo
from conftest import cuda_paths, run_python

ASK = "import torch, torch_foo; torch.randn(4, 4, device='foo').softmax(1).cpu(); print(torch_foo.sim_only_paths())"


@pytest.mark.parametrize("value,expected", [(None, "True"), ("1", "True"), ("0", "False")])
def test_environment_sets_the_default(value, expected):
    r = run_python(ASK, env={} if value is None else {"TORCH_FOO_SIM_ONLY_PATHS": value})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == expected


def test_a_bad_value_is_refused_by_name():
    r = run_python(ASK, env={"TORCH_FOO_SIM_ONLY_PATHS": "yes"})
    assert r.returncode != 0
    assert "TORCH_FOO_SIM_ONLY_PATHS='yes' is invalid" in r.stderr


def test_cuda_paths_switches_and_restores():
    before = torch_foo.sim_only_paths()
    with cuda_paths():
        assert torch_foo.sim_only_paths() is False
        y = torch.randn(8, 8, device="foo").softmax(1)  # the warp kernel, as on cuda
    assert torch_foo.sim_only_paths() is before
    torch.testing.assert_close(y.sum(1).cpu(), torch.ones(8))

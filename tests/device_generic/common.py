"""What the device-generic suite runs on foo, and the base class its test classes share.

PyTorch's own machinery does the rest: instantiate_device_type_tests turns each generic class
into a PrivateUse1TestBase subclass (TestXPRIVATEUSE1, tests named test_x_<op>_foo_<dtype>), and
@ops / @modules / @optims draw cases from torch.testing._internal's op_db, module_db and optim_db.
The covered subset and the expected failures are listed here, with reasons, and in
docs/torch-foo-vs-cuda.md §11.
"""

import sys
from pathlib import Path

import torch
from torch.testing._internal.common_modules import module_db
from torch.testing._internal.common_optimizers import optim_db
from torch.testing._internal.common_utils import TestCase

import torch_foo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from optest import targets, variant_skip  # noqa: E402  (the manifest's ops mapped to their OpInfos)


def native_opinfos():
    """The OpInfos of the manifest's ops (the ops foo runs with its own kernels), each once."""
    return [t.opinfo for _, t in sorted(targets().items()) if not variant_skip(t)]


def manifest_skip(op, dtype):
    """The manifest's reason for not running `op` in `dtype` on foo, or None."""
    key = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
    return targets()[key].skipped(str(dtype).removeprefix("torch."))


# module_db entries whose forward and backward run natively on foo (every op they and their
# module_inputs_func use has a foo kernel): each passes every test of test_modules_generic.py with
# the fallback forbidden. Not here (2026-11-26), by the first op or reason that stops them:
# MultiMarginLoss, MultiLabelMarginLoss, CTCLoss, FractionalMaxPool*,
# MultiheadAttention (baddbmm); TransformerEncoder
# runs natively, but module_db marks its test_factory_kwargs an expected failure, which passes here.
NATIVE_MODULES = (
    "nn.Linear", "nn.Bilinear", "nn.Embedding",
    "nn.RNNCell", "nn.RNN", "nn.GRUCell", "nn.GRU", "nn.LSTMCell", "nn.LSTM",
    "nn.Transformer", "nn.TransformerEncoderLayer", "nn.TransformerDecoderLayer",
    "nn.Conv1d", "nn.Conv2d", "nn.Conv3d", "nn.ConvTranspose1d", "nn.ConvTranspose2d", "nn.ConvTranspose3d",
    "nn.LazyConv1d", "nn.LazyConv2d", "nn.LazyConv3d",
    "nn.LazyConvTranspose1d", "nn.LazyConvTranspose2d", "nn.LazyConvTranspose3d",
    "nn.AvgPool1d", "nn.AvgPool2d", "nn.MaxPool1d", "nn.MaxPool2d", "nn.LPPool1d", "nn.LPPool2d",
    "nn.AvgPool3d", "nn.MaxPool3d", "nn.LPPool3d", "nn.LocalResponseNorm",
    "nn.AdaptiveAvgPool1d", "nn.AdaptiveAvgPool2d", "nn.AdaptiveMaxPool1d", "nn.AdaptiveMaxPool2d",
    "nn.AdaptiveAvgPool3d", "nn.AdaptiveMaxPool3d",
    "nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d", "nn.InstanceNorm1d", "nn.InstanceNorm2d",
    "nn.InstanceNorm3d", "nn.GroupNorm", "nn.LayerNorm", "nn.RMSNorm",
    "nn.ReLU", "nn.ReLU6", "nn.LeakyReLU", "nn.GELU", "nn.SiLU", "nn.Sigmoid", "nn.LogSigmoid", "nn.Tanh",
    "nn.Tanhshrink", "nn.Softsign", "nn.Threshold", "nn.Hardtanh", "nn.Hardswish",
    "nn.ELU", "nn.CELU", "nn.SELU", "nn.Softplus", "nn.Softshrink", "nn.Hardshrink", "nn.Mish", "nn.GLU", "nn.PReLU",
    "nn.Softmax", "nn.Softmax2d", "nn.LogSoftmax", "nn.Softmin",
    "nn.L1Loss", "nn.MSELoss", "nn.HuberLoss", "nn.SmoothL1Loss", "nn.BCELoss", "nn.BCEWithLogitsLoss",
    "nn.NLLLoss", "nn.CrossEntropyLoss", "nn.LinearCrossEntropyLoss", "nn.KLDivLoss", "nn.GaussianNLLLoss",
    "nn.PoissonNLLLoss", "nn.SoftMarginLoss",
    "nn.MultiLabelSoftMarginLoss", "nn.MarginRankingLoss", "nn.CosineEmbeddingLoss", "nn.HingeEmbeddingLoss",
    "nn.ZeroPad1d", "nn.ZeroPad2d", "nn.ZeroPad3d", "nn.ConstantPad1d", "nn.ConstantPad2d", "nn.ConstantPad3d",
    "nn.CircularPad1d", "nn.CircularPad2d", "nn.CircularPad3d",
    "nn.ReflectionPad1d", "nn.ReflectionPad2d", "nn.ReflectionPad3d",
    "nn.ReplicationPad1d", "nn.ReplicationPad2d", "nn.ReplicationPad3d",
)
native_module_db = [m for m in module_db if m.name in NATIVE_MODULES]

# optim_db entries whose step runs natively on foo, for-loop and foreach alike. Not here: LBFGS and
# Muon (no foreach argument; LBFGS steps with a closure), SparseAdam (sparse gradients only).
NATIVE_OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adafactor", "Adamax", "ASGD", "NAdam",
                     "RAdam", "Rprop")
native_optim_db = [o for o in optim_db if o.optim_cls.__name__ in NATIVE_OPTIMIZERS]


class FooTestCase(TestCase):
    """Runs each test with the CPU fallback forbidden: a case that passes ran on foo's kernels."""

    def setUp(self):
        super().setUp()
        self._policy = torch_foo.get_fallback_policy()
        torch_foo.set_fallback_policy("error")

    def tearDown(self):
        torch_foo.set_fallback_policy(self._policy)
        super().tearDown()


def has_foo_kernel(op):
    """Whether `op` ("aten::name.overload") has a foo kernel in this build."""
    return torch._C._dispatch_has_kernel_for_dispatch_key(op, "PrivateUse1")


def to_cpu(x):
    """A CPU copy of every tensor in x (a tensor or nested tuples/lists/dicts of them): results are
    compared on the CPU, so the comparison's own ops never need foo kernels."""
    return torch.utils._pytree.tree_map(lambda t: t.detach().cpu() if isinstance(t, torch.Tensor) else t, x)

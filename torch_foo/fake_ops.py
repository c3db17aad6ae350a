"""Hand-written fake (meta) implementations of foo custom ops: shapes and dtypes without data,
which torch.compile and torch.library.opcheck need to trace an op.

A custom op with a `pointwise:` formula gets its fake implementation generated
(torch_foo/_custom_ops.py, from its iterator's shape rule); only a custom op with a hand-written
kernel needs one here, registered with ``@torch.library.register_fake("foo::<name>")``. Today
every custom op is pointwise, so there is none.
"""

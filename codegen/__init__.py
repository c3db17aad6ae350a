"""torch_foo code generator: yaml/ops.yaml -> generated/ (see docs/codegen.md)."""

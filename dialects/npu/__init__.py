"""The `npu` dialect's machine: the NPU's parameters, instruction formats and
limits (`machine`; docs/npu-isa.md)."""

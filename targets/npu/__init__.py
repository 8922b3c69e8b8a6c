"""The NPU target: Ember's accelerator and its instruction set (`isa`,
specified in docs/npu-isa.md)."""

"""The NPU target: Ember's accelerator's binary encoding (`isa`; the machine
itself is `ember.dialects.npu.machine`, specified in docs/npu-isa.md)."""

"""The NPU target: the binary encoding of its instructions (`isa`) and the
assembler and disassembler between `npu.program`s and binaries
(`assembler`); docs/npu-isa.md specifies the machine."""

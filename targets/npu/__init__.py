"""The NPU target: the binary encoding of its instructions (`isa`), the
assembler and disassembler between `npu.program`s and binaries
(`assembler`) and the functional simulator (`simulator`); docs/npu-isa.md
specifies the machine."""

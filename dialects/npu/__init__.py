"""The `npu` dialect (`ops`: one op per NPU instruction, in an
`npu.program`) and the machine it targets as data (`machine`: parameters,
instruction formats, limits and dependency rules; docs/npu-isa.md)."""

"""Hand-written NPU programs for the simulator's tests, independent of the
lowering (lowering/graph_to_npu/ makes its own): instruction builders and
a tiled int8 matmul."""

from __future__ import annotations

from ember.dialects.npu.machine import Instruction

DIM = 16
FINISH = Instruction("finish")


def instruction(mnemonic: str, flags: str = "", **fields: int) -> Instruction:
    return Instruction(mnemonic, fields, frozenset(flags.split()))


def load(dram: int, local: int, rows: int, cols: int, elem: int, stride: int, to_acc: int = 0,
         flags: str = "") -> Instruction:  # fmt: skip
    return instruction("load", flags, dram_addr=dram, stride=stride, local=local, rows=rows,
                       cols=cols, to_acc=to_acc, elem=elem)  # fmt: skip


def store(dram: int, local: int, rows: int, cols: int, elem: int, stride: int, from_acc: int = 1,
          flags: str = "") -> Instruction:  # fmt: skip
    return instruction("store", flags, dram_addr=dram, stride=stride, local=local, rows=rows,
                       cols=cols, from_acc=from_acc, elem=elem)  # fmt: skip


def gemm(a: int, b: int, c: int, m: int, k: int, n: int, elem: int, accumulate: int = 0,
         flags: str = "") -> Instruction:  # fmt: skip
    return instruction("gemm", flags, a=a, b=b, c=c, m=m, k=k, n=n, accumulate=accumulate,
                       elem=elem)  # fmt: skip


def tiled_matmul(m: int, k: int, n: int, at_a: int, at_b: int, out: int,
                 buffers: int = 2) -> list[Instruction]:  # fmt: skip
    """C = A B (int8, row-major in DRAM; C int32) over DIM x DIM tiles: per
    output tile, the k tiles of A and B loaded into `buffers` alternating SP
    buffers (a load waits until the gemm that read its buffer gave it back),
    accumulated in one of two ACC regions (the first gemm of a tile waits
    until the store two tiles back has read its region), then stored."""
    program: list[Instruction] = []
    places = [(2048 * b, 2048 * b + 512) for b in range(buffers)]
    step = given_back = tile = 0
    for i in range(0, m, DIM):
        for j in range(0, n, DIM):
            region = DIM * (tile % 2)
            tiles = list(range(0, k, DIM))
            for t, p in enumerate(tiles):
                sp_a, sp_b = places[step % buffers]
                rows, depth, cols = min(DIM, m - i), min(DIM, k - p), min(DIM, n - j)
                wait = "pop_next" if step >= buffers else ""
                program.append(load(at_a + i * k + p, sp_a, rows, depth, 0, k, flags=wait))
                program.append(load(at_b + p * n + j, sp_b, depth, cols, 0, n, flags="push_next"))
                flags = ["pop_prev", "push_prev"]
                flags += ["pop_next"] if t == 0 and tile >= 2 else []
                flags += ["push_next"] if t == len(tiles) - 1 else []
                program.append(gemm(sp_a, sp_b, region, rows, depth, cols, 0,
                                    accumulate=int(t > 0), flags=" ".join(flags)))  # fmt: skip
                given_back += 1 - (step >= buffers)
                step += 1
            program.append(store(out + 4 * (i * n + j), region, min(DIM, m - i), min(DIM, n - j),
                                 3, 4 * n, flags="pop_prev push_prev"))  # fmt: skip
            tile += 1
    for _ in range(min(tile, 2)):  # the stores' last tokens: compute takes them
        program.append(instruction("alu", "pop_next", op=7, src=64, src2=64, dst=64, rows=1,
                                   cols=1, use_imm=1, elem=3, imm=0))  # fmt: skip
    for _ in range(given_back):  # the buffers given back that no load took
        program.append(load(0, 4 * 2048 - 16, 1, 1, 0, 1, flags="pop_next"))
    return [*program, FINISH]

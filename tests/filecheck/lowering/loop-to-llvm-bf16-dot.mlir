// RUN: ember-opt %s -p 'convert-loop-to-llvm{bf16-dot=instruction}' | filecheck %s --check-prefix=INSTR
// RUN: ember-opt %s -p 'convert-loop-to-llvm{bf16-dot=expanded}' | filecheck %s --check-prefix=EXPANDED
// RUN: not ember-opt %s -p 'convert-loop-to-llvm{bf16-dot=fast}' 2>&1 | filecheck %s --check-prefix=BAD

// loop.bf16_dot, as a bfloat16 micro-kernel emits it: 16 f32 lanes, each
// plus the two products of its pair of bfloat16 elements. With the CPU's
// instruction (AVX512-BF16), the pairs are i32 lanes for the intrinsic
// (LLVM's upgrade gives them the bfloat type); without it, the even
// element is the pair's low half shifted up, the odd one its high half
// masked, and two fmas add them. tests/lowering/test_loop_to_llvm.py runs
// this file in both forms.
func.func @pairs(%acc: memref<16xf32>, %a: memref<32xbf16>, %b: memref<32xbf16>) {
  %c0 = arith.constant 0 : index
  %x = vector.load %acc[%c0] : memref<16xf32>, vector<16xf32>
  %y = vector.load %a[%c0] : memref<32xbf16>, vector<32xbf16>
  %z = vector.load %b[%c0] : memref<32xbf16>, vector<32xbf16>
  %r = loop.bf16_dot %x, %y, %z : vector<16xf32>, vector<32xbf16>
  vector.store %r, %acc[%c0] : memref<16xf32>, vector<16xf32>
  func.return
}

// A row's pair a[k], a[k+1] against 16 columns of pairs, as a micro-kernel
// reads a bfloat16 row: two elements loaded, taken as one i32, broadcast to
// every lane (vector.shuffle of a one-lane vector), seen as 32 bfloat16.
func.func @row_pair(%acc: memref<16xf32>, %a: memref<2xbf16>, %b: memref<32xbf16>) {
  %c0 = arith.constant 0 : index
  %x = vector.load %acc[%c0] : memref<16xf32>, vector<16xf32>
  %pair = vector.load %a[%c0] : memref<2xbf16>, vector<2xbf16>
  %word = vector.bitcast %pair : vector<2xbf16> to vector<1xi32>
  %words = vector.shuffle %word, %word [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<1xi32>, vector<1xi32>
  %y = vector.bitcast %words : vector<16xi32> to vector<32xbf16>
  %z = vector.load %b[%c0] : memref<32xbf16>, vector<32xbf16>
  %r = loop.bf16_dot %x, %y, %z : vector<16xf32>, vector<32xbf16>
  vector.store %r, %acc[%c0] : memref<16xf32>, vector<16xf32>
  func.return
}

// INSTR-LABEL: llvm.func @pairs
// INSTR:         %[[A:.*]] = llvm.bitcast %{{.*}} : vector<32xi16> to vector<16xi32>
// INSTR-NEXT:    %[[B:.*]] = llvm.bitcast %{{.*}} : vector<32xi16> to vector<16xi32>
// INSTR-NEXT:    %{{.*}} = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%{{.*}}, %[[A]], %[[B]]) : (vector<16xf32>, vector<16xi32>, vector<16xi32>) -> vector<16xf32>

// INSTR-LABEL: llvm.func @row_pair
// INSTR:         %[[PAIR:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<2xi16>
// INSTR-NEXT:    %[[WORD:.*]] = llvm.bitcast %[[PAIR]] : vector<2xi16> to vector<1xi32>
// INSTR-NEXT:    %[[WORDS:.*]] = llvm.shufflevector %[[WORD]], %[[WORD]] [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<1xi32>
// INSTR:         llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"

// EXPANDED-LABEL: llvm.func @pairs
// EXPANDED-NOT:     call_intrinsic
// EXPANDED:         llvm.shl
// EXPANDED:         llvm.and
// EXPANDED-COUNT-2: llvm.intr.fma

// BAD: convert-loop-to-llvm: bf16-dot=fast is not one of host, instruction, expanded

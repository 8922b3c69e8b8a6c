// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop | filecheck %s --check-prefix=BUF
// RUN: ember-opt %s -p 'convert-graph-to-tensor,convert-tensor-to-loop,tensor-default-schedule{cpu=haswell}' | filecheck %s --check-prefix=SCHED
// RUN: ember-opt %s -p 'convert-graph-to-tensor,convert-tensor-to-loop,tensor-default-schedule{cpu=haswell},loop-generate' | filecheck %s --check-prefix=GEN
// RUN: ember-opt %s -p 'convert-graph-to-tensor,convert-tensor-to-loop,tensor-default-schedule{cpu=haswell},loop-generate,loop-pack-weights,loop-plan-memory' | filecheck %s --check-prefix=PLAN
// RUN: ember-opt %s -p 'convert-graph-to-tensor,convert-tensor-to-loop,tensor-default-schedule{cpu=haswell},loop-generate,loop-pack-weights,loop-plan-memory,loop-outline-kernels,convert-loop-to-llvm' | filecheck %s --check-prefix=LLVM

// A sequence length S known only at run time, through every level.
func.func @rows(%x: tensor<1x?x16xf32, #graph.dims<S>>, %w: tensor<16x32xf32>) -> tensor<1x?x32xf32, #graph.dims<S>> attributes {ember.packed_buffers, graph.symbols = {S = #graph.range<1, 512>}} {
  %y = graph.matmul %x, %w : (tensor<1x?x16xf32, #graph.dims<S>>, tensor<16x32xf32>) -> tensor<1x?x32xf32, #graph.dims<S>>
  %z = graph.softmax %y {axis = -1 : i64} : (tensor<1x?x32xf32, #graph.dims<S>>) -> tensor<1x?x32xf32, #graph.dims<S>>
  func.return %z : tensor<1x?x32xf32, #graph.dims<S>>
}

// Bufferization reads S once (memref.dim of the input, marked with the
// symbol); buffers are allocated with it and reshapes are views whose
// sizes and strides are computed from it.
// BUF:       func.func @rows(%x: memref<1x?x16xf32>, %w: memref<16x32xf32>, %out0: memref<1x?x32xf32>)
// BUF-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// BUF-NEXT:    %S = memref.dim %x, %[[ONE]] {ember.symbol = "S"} : memref<1x?x16xf32>
// BUF-NEXT:    %[[C32:.*]] = arith.constant 32 : index
// BUF-NEXT:    %[[STRIDE:.*]] = arith.muli %S, %[[C32]] : index
// BUF-NEXT:    %[[ROWS:.*]] = memref.reinterpret_cast %x to offset: [0], sizes: [%S, 16], strides: [16, 1] : memref<1x?x16xf32> to memref<?x16xf32>
// BUF-NEXT:    %[[Y:.*]] = memref.alloc(%S) : memref<?x32xf32>
// BUF:         linalg.matmul ins(%[[ROWS]], %w : memref<?x16xf32>, memref<16x32xf32>) outs(%[[Y]] : memref<?x32xf32>)
// BUF-NEXT:    memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [1, %S, 32], strides: [%[[STRIDE]], 32, 1]
// BUF-NEXT:    memref.alloc(%S) : memref<1x?xf32>

// The schedules are made for a planning size of S and hold for any: S is
// never tiled, and the micro-kernel runs its rows along S.
// SCHED:     linalg.matmul {{.*}}schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 6, 16]>

// The micro-kernel's blocks start from zero (the fill absorbed): with 6 rows
// or more, blocks of 6 cover S, the last starting at S - 6 (overlapping the
// one before, as in a static nest); fewer rows (1 to 5) run as one block of
// exactly that many, as a static nest of that size would, with as many
// accumulators as a block of 6 (the one-row block takes all 32 columns at
// once): the weights are read once, not once per row. The loop ends are
// selected, not branched on. The other nests run to S.
// GEN:         %[[ENOUGH:.*]] = arith.cmpi sge, %S, %c6 : index
// GEN-NEXT:    %[[END:.*]] = arith.select %[[ENOUGH]], %S, %c0 : index
// GEN-NEXT:    %[[LAST:.*]] = arith.subi %S, %c6 : index
// GEN-NEXT:    "scf.parallel"(%c0, %[[END]], %c6)
// GEN-NEXT:    ^bb0(%[[ROW:.*]]: index):
// GEN-NEXT:      arith.minsi %[[ROW]], %[[LAST]] : index
// GEN:         %[[FEW:.*]] = arith.cmpi slt, %[[END]], %S : index
// GEN-NEXT:    %[[LEFT:.*]] = arith.select %[[FEW]], %S, %c0 : index
// GEN-NEXT:    %[[ONE:.*]] = arith.cmpi eq, %[[LEFT]], %c1 : index
// GEN-NEXT:    %[[ONCE:.*]] = arith.select %[[ONE]], %c1, %c0 : index
// GEN-NEXT:    scf.for %{{.*}} = %c0 to %[[ONCE]] step %c1 {
// GEN-NEXT:      "scf.parallel"(%c0, %c32, %c32)
// GEN:         arith.cmpi eq, %[[LEFT]], %c5 : index
// GEN-NOT:     "scf.parallel"(%[[END]], %S, %c1)
// GEN:         "scf.parallel"(%{{.*}}, %S, %{{.*}})

// The arena's size is a formula in S: the buffers sized by S share one
// region, planned at S = 1 and scaled by S (at 64-byte alignment).
// PLAN:      func.func @rows({{.*}}%arena: memref<?xi8> {ember.arena}) attributes {{{.*}}loop.arena_bytes = "320 * S"
// PLAN:        memref.view %arena[%{{.*}}][%S] : memref<?xi8> to memref<?x32xf32>

// The packed entry takes the buffers' run-time sizes after the buffers.
// LLVM:      llvm.func @rows(%buffers: !llvm.ptr, %dims: !llvm.ptr, %weights: !llvm.ptr, %arena: !llvm.ptr)
// LLVM:        %[[SLOT:.*]] = llvm.getelementptr inbounds %dims[0] : (!llvm.ptr) -> !llvm.ptr, i64
// LLVM-NEXT:   %S = llvm.load %[[SLOT]] : !llvm.ptr -> i64

// Ten columns and S rows: the output's fill is absorbed (the blocks start
// from zero), so no column is left to the scalar body, neither in the blocks
// of rows nor in the block for fewer rows; the last block of columns
// overlaps the first (arith.minsi), as in a static nest.
func.func @narrow(%x: tensor<?x16xf32, #graph.dims<S>>, %w: tensor<16x10xf32>) -> tensor<?x10xf32, #graph.dims<S>> attributes {ember.packed_buffers, graph.symbols = {S = #graph.range<1, 512>}} {
  %y = graph.matmul %x, %w : (tensor<?x16xf32, #graph.dims<S>>, tensor<16x10xf32>) -> tensor<?x10xf32, #graph.dims<S>>
  func.return %y : tensor<?x10xf32, #graph.dims<S>>
}

// GEN-LABEL: func.func @narrow
// GEN-NOT:     linalg.fill
// GEN:         %[[END:.*]] = arith.select
// GEN:         "scf.parallel"(%c0, %[[END]], %c8)
// GEN:         arith.minsi %{{.*}}, %c2 : index
// GEN:         vector.store {{.*}}, %out0
// GEN:         scf.for %{{.*}} = %c0 to %{{.*}} step %c1 {
// GEN:         vector.store {{.*}}, %out0
// GEN:         vector.store {{.*}}, %out0
// GEN-NOT:     memref.load %out0
// GEN-NOT:     memref.store
// GEN:         func.return

// A tensor.from_elements of sizes (a Shape's values used as data) is a buffer
// the function fills where it starts: each size the function's value of its
// symbol, read once at the top, not read from the buffer again.
func.func @shape_values(%x: tensor<?x?xi1, #graph.dims<B, S>>) -> tensor<2xi64> attributes {graph.symbols = {B = #graph.range<1, ?>, S = #graph.range<1, ?>}} {
  %shape = graph.shape %x : (tensor<?x?xi1, #graph.dims<B, S>>) -> tensor<2xi64>
  func.return %shape : tensor<2xi64>
}

// BUF-LABEL: func.func @shape_values(%x: memref<?x?xi1>, %out0: memref<2xi64>)
// BUF:         %B = memref.dim %x, %{{.*}} {ember.symbol = "B"} : memref<?x?xi1>
// BUF:         %S = memref.dim %x, %{{.*}} {ember.symbol = "S"} : memref<?x?xi1>
// BUF-NEXT:    %[[B64:.*]] = arith.index_cast %B : index to i64
// BUF-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// BUF-NEXT:    memref.store %[[B64]], %out0[%[[C0]]] : memref<2xi64>
// BUF-NEXT:    %[[S64:.*]] = arith.index_cast %S : index to i64
// BUF-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// BUF-NEXT:    memref.store %[[S64]], %out0[%[[C1]]] : memref<2xi64>
// BUF-NOT:     memref.dim
// BUF:         func.return

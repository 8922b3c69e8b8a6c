// RUN: ember-opt %s -p convert-graph-to-tensor --print-debuginfo | filecheck %s --check-prefix=TENSOR
// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop,loop-generate --print-debuginfo | filecheck %s --check-prefix=LOOP

// Source names (the model's nodes, as locations) go down with the
// computation: the tensor-level ops of a graph op take its location, and
// so do the buffers' ops and the loop nests made of them.
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32> loc("fc1")
  %r = graph.relu %m : (tensor<4x3xf32>) -> tensor<4x3xf32> loc("relu1")
  func.return %r : tensor<4x3xf32>
}

// TENSOR:      tensor.empty() {{.*}} loc("fc1")
// TENSOR:      linalg.fill {{.*}} loc("fc1")
// TENSOR:      %m = linalg.matmul {{.*}} loc("fc1")
// TENSOR:      tensor.empty() {{.*}} loc("relu1")
// TENSOR:      %r = linalg.generic
// TENSOR:      } -> tensor<4x3xf32> loc("relu1")

// LOOP:        %m = memref.alloc() : memref<4x3xf32> loc("fc1")
// LOOP:        "scf.parallel"
// LOOP:        }) : (index, index, index) -> () loc("fc1")
// LOOP:        "scf.parallel"
// LOOP:        loc("fc1")
// LOOP:        "scf.parallel"
// LOOP:        loc("relu1")
// LOOP:        func.return loc(unknown)

// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case is one loop.kernel that breaks a rule of its verifier.

// kernel: loop.yield must yield values of the kernel's result types.
func.func @kernel_types(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  %r = loop.kernel -> (tensor<2x2xf32>) {
    loop.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<2x2xf32>
}

// CHECK:      sym_name = "kernel_types"
// CHECK:      Operation does not verify: loop.kernel: loop.yield yields (tensor<4xf32>) but the kernel's results are (tensor<2x2xf32>)

// -----

// kernel: a kernel with results must yield them (the implicit terminator
// yields nothing).
func.func @kernel_missing_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = loop.kernel -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// CHECK:      sym_name = "kernel_missing_yield"
// CHECK:      Operation does not verify: loop.kernel: loop.yield yields () but the kernel's results are (tensor<4xf32>)

// -----

// yield: only inside a kernel.
func.func @yield_outside() {
  loop.yield
}

// CHECK:      Operation does not verify: 'loop.yield' expects parent op 'loop.kernel'

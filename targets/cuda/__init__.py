"""CUDA back end. `emulator` runs a `gpu`-level module (kernels and the host
functions that launch them) on the CPU, every block and every thread,
barriers respected, so the GPU path is tested where no GPU is."""

"""The NPU simulator: `functional` runs programs exactly on NumPy memories."""

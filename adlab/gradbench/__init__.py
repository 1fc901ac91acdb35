"""adlab as a GradBench tool (``python -m adlab gradbench``), and a harness to run GradBench's evals."""

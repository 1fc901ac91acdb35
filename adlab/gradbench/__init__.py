"""adlab as a GradBench tool (``python -m adlab gradbench``), and a harness that runs
GradBench's evals against a tool (``adlab.gradbench.harness``)."""

"""adlab.engine."""

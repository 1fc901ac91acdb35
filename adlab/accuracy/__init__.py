"""adlab.accuracy."""

"""Compiled programs: JAX's disk cache, adlab's store of programs, their keys, memory."""

from .jax_cache import disable as disable
from .jax_cache import use_cache as use_cache
from .jaxpr import call_body as call_body
from .jaxpr import equations as equations
from .jaxpr import equations_within as equations_within
from .jaxpr import sub_jaxprs as sub_jaxprs
from .memory import SizeError as SizeError

"""Compiled programs: where they are kept on disk, adlab's store of them, their keys, memory."""

from .disk import disable as disable
from .jaxpr import call_body as call_body
from .jaxpr import equations as equations
from .jaxpr import equations_within as equations_within
from .jaxpr import sub_jaxprs as sub_jaxprs
from .memory import SizeError as SizeError

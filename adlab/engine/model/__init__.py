"""A model's source: parsed, folded, run under each backend, its lines named in errors.

``Model`` is imported from ``model.source``, not from here: it runs its source on the
backends, and the backends build on the rest of this folder (precision, args, the
user's line), so loading this folder must not load ``source`` (an import cycle).
"""

from .args import backend_inputs as backend_inputs
from .args import cast_args as cast_args
from .args import cast_leaf as cast_leaf
from .args import wrt_indices as wrt_indices
from .folding import fold_constants as fold_constants
from .precision import COMPLEX as COMPLEX
from .precision import dtype_of as dtype_of
from .precision import precision_scope as precision_scope
from .precision import restore_x64 as restore_x64
from .precision import swap_x64 as swap_x64
from .userline import REMEDIES as REMEDIES
from .userline import TRACER_ERRORS as TRACER_ERRORS
from .userline import eqn_frames as eqn_frames
from .userline import eqn_line as eqn_line
from .userline import running_on as running_on
from .userline import source_line as source_line
from .userline import speaking_to as speaking_to
from .userline import without_where as without_where

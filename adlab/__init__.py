"""adlab: see how derivatives are computed and what they cost, on your own model.

The public surface is re-exported here; implementation modules are private.
"""

from ._derivative import Info as Info
from ._derivative import Prepared as Prepared
from ._derivative import UntrustedWarning as UntrustedWarning
from ._derivative import derivative as derivative
from ._derivative import prepare as prepare
from ._memory import SizeError as SizeError
from ._model import Model as Model
from ._types import MODES as MODES
from ._types import SCHEMES as SCHEMES
from ._types import ModelError as ModelError
from .catalog import catalog as catalog
from .catalog import load_model as load_model

__version__ = "0.1.0"

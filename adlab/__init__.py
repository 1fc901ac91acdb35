"""adlab: see how derivatives are computed and what they cost, on your own model.

The public surface is re-exported here; implementation modules are private.
"""

from ._accuracy import RichardsonPoint as RichardsonPoint
from ._accuracy import SchemeSummary as SchemeSummary
from ._accuracy import optimal_step as optimal_step
from ._accuracy import richardson_check as richardson_check
from ._accuracy import step_sweep as step_sweep
from ._accuracy import sweep_summary as sweep_summary
from ._derivative import Info as Info
from ._derivative import Prepared as Prepared
from ._derivative import UntrustedWarning as UntrustedWarning
from ._derivative import derivative as derivative
from ._derivative import prepare as prepare
from ._memory import SizeError as SizeError
from ._model import Model as Model
from ._precision_table import PrecisionRow as PrecisionRow
from ._precision_table import precision_table as precision_table
from ._reference import Reference as Reference
from ._reference import max_relative_error as max_relative_error
from ._reference import normwise_relative_error as normwise_relative_error
from ._reference import reference as reference
from ._types import MODES as MODES
from ._types import SCHEMES as SCHEMES
from ._types import ModelError as ModelError
from ._types import Record as Record
from ._types import StepRecord as StepRecord
from ._types import Timing as Timing
from .catalog import catalog as catalog
from .catalog import load_model as load_model
from .measure import Sweep as Sweep
from .measure import Variant as Variant
from .measure import bench as bench
from .measure import dispatch_floor as dispatch_floor
from .measure import environment as environment
from .measure import time_call as time_call
from .report import format_records as format_records
from .report import format_table as format_table
from .report import from_json as from_json
from .report import to_csv as to_csv
from .report import to_json as to_json

__version__ = "0.1.0"


def __getattr__(name: str):
    # The Lab is imported on first use, so `import adlab` imports no widget or plotting library.
    if name == "Lab":
        from .lab import Lab

        return Lab
    raise AttributeError(f"module 'adlab' has no attribute {name!r}")

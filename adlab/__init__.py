"""adlab: see how derivatives are computed and what they cost, on your own model.

The public surface is re-exported here; implementation modules are private.
"""

from ._vocab import BACKENDS as BACKENDS
from ._vocab import MODES as MODES
from ._vocab import SCHEMES as SCHEMES
from ._vocab import ModelError as ModelError
from ._vocab import Record as Record
from ._vocab import StepRecord as StepRecord
from ._vocab import Timing as Timing
from .accuracy.hessian_reference import hessian_reference as hessian_reference
from .accuracy.precision_table import PrecisionRow as PrecisionRow
from .accuracy.precision_table import precision_table as precision_table
from .accuracy.reference import Reference as Reference
from .accuracy.reference import max_relative_error as max_relative_error
from .accuracy.reference import normwise_relative_error as normwise_relative_error
from .accuracy.reference import reference as reference
from .accuracy.steps import RichardsonPoint as RichardsonPoint
from .accuracy.steps import SchemeSummary as SchemeSummary
from .accuracy.steps import optimal_step as optimal_step
from .accuracy.steps import richardson_check as richardson_check
from .accuracy.steps import step_errors as step_errors
from .accuracy.steps import step_summary as step_summary
from .catalog import list_models as list_models
from .catalog import load_model as load_model
from .engine.derivative import DerivativeInfo as DerivativeInfo
from .engine.derivative import Prepared as Prepared
from .engine.derivative import UntrustedWarning as UntrustedWarning
from .engine.derivative import derivative as derivative
from .engine.derivative import prepare as prepare
from .engine.model.source import Model as Model
from .engine.modes import ALL_MODES as ALL_MODES
from .engine.modes import registered_modes as registered_modes
from .engine.programs.memory import SizeError as SizeError
from .engine.second import hessian as hessian
from .engine.second import hvp as hvp
from .engine.second import prepare_hessian as prepare_hessian
from .engine.second import prepare_hvp as prepare_hvp
from .measure import Series as Series
from .measure import Sweep as Sweep
from .measure import bench as bench
from .measure import dispatch_floor as dispatch_floor
from .measure import environment as environment
from .measure import time_call as time_call
from .measure.advisor import Advice as Advice
from .measure.advisor import advise as advise
from .measure.findings import Crossover as Crossover
from .measure.findings import compare as compare
from .measure.findings import crossovers as crossovers
from .measure.floor import NoisyMachineWarning as NoisyMachineWarning
from .measure.profile import OpCost as OpCost
from .measure.profile import Profile as Profile
from .measure.profile import profile as profile
from .report import format_records as format_records
from .report import format_table as format_table
from .report import from_json as from_json
from .report import to_csv as to_csv
from .report import to_json as to_json
from .report.comparison import ComparedPoint as ComparedPoint
from .report.comparison import RunComparison as RunComparison
from .report.comparison import compare_runs as compare_runs
from .report.export_js import export_dts as export_dts
from .report.export_js import export_js as export_js
from .report.runs import Run as Run
from .report.runs import load as load
from .report.runs import save as save

__version__ = "0.1.0"

#: Every public name: what the API reference documents (docs/api.rst) and the doctests run
#: (tests/docs/test_api_docstrings.py). A name exported above goes here too.
__all__ = [
    "BACKENDS",
    "MODES",
    "SCHEMES",
    "ModelError",
    "Record",
    "StepRecord",
    "Timing",
    "hessian_reference",
    "PrecisionRow",
    "precision_table",
    "Reference",
    "max_relative_error",
    "normwise_relative_error",
    "reference",
    "RichardsonPoint",
    "SchemeSummary",
    "optimal_step",
    "richardson_check",
    "step_errors",
    "step_summary",
    "list_models",
    "load_model",
    "DerivativeInfo",
    "Prepared",
    "UntrustedWarning",
    "derivative",
    "prepare",
    "Model",
    "ALL_MODES",
    "registered_modes",
    "SizeError",
    "hessian",
    "hvp",
    "prepare_hessian",
    "prepare_hvp",
    "Series",
    "Sweep",
    "bench",
    "dispatch_floor",
    "environment",
    "time_call",
    "Advice",
    "advise",
    "Crossover",
    "compare",
    "crossovers",
    "NoisyMachineWarning",
    "OpCost",
    "Profile",
    "profile",
    "format_records",
    "format_table",
    "from_json",
    "to_csv",
    "to_json",
    "export_js",
    "export_dts",
    "Run",
    "load",
    "save",
    "compare_runs",
    "ComparedPoint",
    "RunComparison",
    "Lab",
    "SparsePrepared",
]


def __getattr__(name: str):
    # The Lab is imported on first use, so `import adlab` imports no widget or plotting library.
    if name == "Lab":
        from .lab import Lab

        return Lab
    if name == "SparsePrepared":  # scipy.sparse only once sparse is asked for
        from .engine.sparse import SparsePrepared

        return SparsePrepared
    raise AttributeError(f"module 'adlab' has no attribute {name!r}")

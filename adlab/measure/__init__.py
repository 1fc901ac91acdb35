"""Measurement: honest timings, XLA costs, and sweeps that stream records.

Nothing here imports a widget or plotting library: the Lab and the CLI build
on it, never the other way round.
"""

from ._env import environment as environment
from ._sweep import BUDGET_S as BUDGET_S
from ._sweep import DEFAULT_MODES as DEFAULT_MODES
from ._sweep import DEFAULT_SIZES as DEFAULT_SIZES
from ._sweep import Sweep as Sweep
from ._sweep import bench as bench
from ._sweep import dispatch_floor as dispatch_floor
from ._sweep import resolve_model as resolve_model
from ._timing import time_call as time_call
from ._variant import Variant as Variant
from ._variant import parse_variant as parse_variant
from ._variant import parse_variants as parse_variants

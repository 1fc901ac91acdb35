"""Measurement: honest timings, XLA costs, and sweeps that stream records.

Nothing here imports a widget or plotting library: the Lab and the CLI build
on it, never the other way round.
"""

from .env import environment as environment
from .env import machine_environment as machine_environment
from .floor import NoisyMachineWarning as NoisyMachineWarning
from .floor import dispatch_floor as dispatch_floor
from .series import Series as Series
from .series import parse_variant as parse_variant
from .series import parse_variants as parse_variants
from .sweep import BUDGET_S as BUDGET_S
from .sweep import DEFAULT_MODES as DEFAULT_MODES
from .sweep import DEFAULT_SIZES as DEFAULT_SIZES
from .sweep import Sweep as Sweep
from .sweep import bench as bench
from .sweep import default_modes as default_modes
from .timing import time_call as time_call

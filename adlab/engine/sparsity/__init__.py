"""Sparsity: the pattern read from the program, its coloring, fronts and passes."""

from .coloring import Coloring as Coloring
from .coloring import color_columns as color_columns
from .coloring import color_rows as color_rows
from .coloring import is_column_coloring as is_column_coloring
from .coloring import is_star_coloring as is_star_coloring
from .coloring import recovery as recovery
from .coloring import star_color as star_color
from .front import FrontRows as FrontRows
from .front import front_rows as front_rows
from .index_sets import PatternTooLarge as PatternTooLarge
from .index_sets import inexact as inexact
from .passes import WRITTEN_OUT as WRITTEN_OUT
from .passes import Program as Program
from .passes import by_color as by_color
from .passes import faster as faster
from .passes import pass_bytes as pass_bytes
from .passes import reader as reader
from .pattern import Detected as Detected
from .pattern import hessian_pattern as hessian_pattern
from .pattern import jacobian_pattern as jacobian_pattern
from .pattern import refusal as refusal

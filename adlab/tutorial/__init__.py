"""What the tutorial notebooks call: quick mode, small studies and readings of records.

The notebooks in ``notebooks/`` hold narrative and calls; the logic is here
(and in the rest of adlab), tested like any other code. Nothing here imports
a plotting library: the figures are in ``adlab.plots.figures``.

- ``quick()`` / ``pick(full, quick)``: ``ADLAB_QUICK=1`` shrinks the sizes.
- ``fused_descent``: K gradient steps per call vs fused into one compiled call.
- ``xla_costs``, then (``costs.py``) ``costs_table``, ``bound_table``, ``cheapest_table``:
  flops and memory of compiled derivatives.
- ``python_loop_model`` / ``python_loop_variant``: the per-sample loss as a Python loop;
  ``in_framework``: the per-sample case's series in another framework;
  ``flops_reading``, ``operations_table``, ``gradient_hope``: a profile of its gradient.
- readings of records: ``crossover_table``, ``floor_table``, ``warmup_table``,
  ``ratio_table``, ``per_output_row``, ``truncation_order``, ``orders_table``,
  ``compare_modes``, ``summary_table``, ``richardson_table``, ``precision_rows_table``,
  ``agreement``, ``fused_table``.
- ``Table``: rows of text, HTML in a notebook, text in ``print``.
- ``second_order``: colorings against n and passes per composition (notebook 07).
- ``memory``: the chain model, each framework's peak and residuals on it, and readings of a
  sweep with and without checkpointing (notebook 08).
- frameworks (``frameworks.py``): ``available`` (the variants whose framework is
  installed), ``frameworks_table``, ``how`` a framework ran, ``frame_table``, ``ratios_table``,
  ``gist_table`` / ``julia_gist``, ``passes_table``, ``compiled_table``,
  ``precision_pairs``, ``float32_check``.
- JavaScript and TF.js (``browser.py``, questions 1 and 5 in the askers' runtime):
  ``asker_table``, ``question_1_crossovers``, ``javascript_agreement``, ``devices_table``,
  ``tidy_check``.
- ``frame_page`` (``export_page.py``): the exported gradient in a page of its own (no adlab),
  timed in that page's frame in headless Chromium where it is here.
"""

from .._format import human_bytes as human_bytes
from ..measure.costs import CostRow as CostRow
from ..measure.costs import xla_costs as xla_costs
from ..measure.fused import FusedDescent as FusedDescent
from ..measure.fused import fused_descent as fused_descent
from ..report.table import Table as Table
from . import memory as memory
from .browser import asker_table as asker_table
from .browser import devices_table as devices_table
from .browser import javascript_agreement as javascript_agreement
from .browser import levels_table as levels_table
from .browser import question_1_crossovers as question_1_crossovers
from .browser import tidy_check as tidy_check
from .costs import bound_table as bound_table
from .costs import cheapest_table as cheapest_table
from .costs import costs_table as costs_table
from .export_page import FramePage as FramePage
from .export_page import frame_page as frame_page
from .frameworks import available as available
from .frameworks import compiled_table as compiled_table
from .frameworks import float32_check as float32_check
from .frameworks import frame_table as frame_table
from .frameworks import frameworks_table as frameworks_table
from .frameworks import gist_table as gist_table
from .frameworks import how as how
from .frameworks import julia_gist as julia_gist
from .frameworks import passes_table as passes_table
from .frameworks import precision_pairs as precision_pairs
from .frameworks import ratios_table as ratios_table
from .per_sample import flops_reading as flops_reading
from .per_sample import gradient_hope as gradient_hope
from .per_sample import in_framework as in_framework
from .per_sample import operations_table as operations_table
from .per_sample import python_loop_model as python_loop_model
from .per_sample import python_loop_variant as python_loop_variant
from .quick import pick as pick
from .quick import quick as quick
from .readings import agreement as agreement
from .readings import compare_modes as compare_modes
from .readings import crossover_table as crossover_table
from .readings import floor_table as floor_table
from .readings import fused_table as fused_table
from .readings import orders_table as orders_table
from .readings import per_output_row as per_output_row
from .readings import precision_rows_table as precision_rows_table
from .readings import ratio_table as ratio_table
from .readings import richardson_table as richardson_table
from .readings import summary_table as summary_table
from .readings import truncation_order as truncation_order
from .readings import warmup_table as warmup_table

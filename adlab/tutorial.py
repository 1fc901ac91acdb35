"""What the tutorial notebooks call: quick mode, small studies and readings of records.

The notebooks in ``notebooks/`` hold narrative and calls; the logic is here
(and in the rest of adlab), tested like any other code. Nothing here imports
a plotting library: the figures are in ``adlab.plots.figures``.

- ``quick()`` / ``pick(full, quick)``: ``ADLAB_QUICK=1`` shrinks the sizes.
- ``fused_descent``: K gradient steps per call vs fused into one compiled call.
- ``xla_costs`` / ``costs_table``: flops and memory of compiled derivatives.
- ``python_loop_model`` / ``python_loop_variant``: the per-sample loss as a Python loop.
- readings of records: ``crossover_table``, ``floor_table``, ``warmup_table``,
  ``ratio_table``, ``per_output_row``, ``truncation_order``, ``orders_table``,
  ``compare_modes``, ``summary_table``, ``richardson_table``, ``precision_rows_table``,
  ``bound_table``, ``cheapest_table``, ``agreement``.
- ``Table``: rows of text, HTML in a notebook, text in ``print``.
"""

from ._fused import FusedDescent as FusedDescent
from ._fused import fused_descent as fused_descent
from ._per_sample import python_loop_model as python_loop_model
from ._per_sample import python_loop_variant as python_loop_variant
from ._quick import pick as pick
from ._quick import quick as quick
from ._readings import agreement as agreement
from ._readings import bound_table as bound_table
from ._readings import cheapest_table as cheapest_table
from ._readings import compare_modes as compare_modes
from ._readings import crossover_table as crossover_table
from ._readings import floor_table as floor_table
from ._readings import orders_table as orders_table
from ._readings import per_output_row as per_output_row
from ._readings import precision_rows_table as precision_rows_table
from ._readings import ratio_table as ratio_table
from ._readings import richardson_table as richardson_table
from ._readings import summary_table as summary_table
from ._readings import truncation_order as truncation_order
from ._readings import warmup_table as warmup_table
from ._table import Table as Table
from ._xla_costs import CostRow as CostRow
from ._xla_costs import costs_table as costs_table
from ._xla_costs import human_bytes as human_bytes
from ._xla_costs import xla_costs as xla_costs

"""The Lab's skin: ipywidgets linked to a ``LabState``, and the Bokeh plots.

Nothing here decides anything: each widget is linked (``traitlets.link`` /
``dlink``) to a trait of the state, buttons call the state's methods, and the
plots follow the state's ``results`` and ``steps``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as w
import traitlets

from .._vocab import AnyMode, Backend
from ..engine.model.source import Model
from ..plots import LabPlots
from ..plots.bokehjs import publish_bokehjs
from ..plots.page import write_report
from ..report.runs import load
from .choices import (
    checkpoint_row,
    composition_boxes,
    framework_boxes,
    jit_buttons,
    link_boxes,
    mode_boxes,
    sparse_buttons,
    watch_refusals,
)
from .code_editor import CodeEditor
from .compared import Compared
from .liveplot import LivePlot
from .options import delegate_options
from .page_runner import PageRunner, describe
from .panel import controls
from .state import LabState

_STYLE = """<style>
.adlab-error pre { color: #b00020; background: #fff0f0; margin: 0; padding: 4px 6px;
  white-space: pre-wrap; }
.adlab-editor .cm-editor { height: 100%; }
.adlab-status .widget-html-content { line-height: 1.35; max-height: 8.1em; overflow-y: auto; }
.adlab-hint .widget-html-content { line-height: 1.35; color: #666; font-size: 90%; }
</style>"""
# a long model scrolls in the editor, and a finished run's notes in the status line past six
# lines: either, grown to its text, pushed the plots below a 1000-pixel-high window


def _kernel_post() -> Callable[[Callable[[], None]], None] | None:
    """The kernel's IO loop ``add_callback`` (thread-safe), or None outside a kernel."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return None
    kernel = getattr(get_ipython(), "kernel", None)
    loop = getattr(kernel, "io_loop", None)
    return loop.add_callback if loop is not None else None


class Lab(w.VBox):
    """adlab's interactive bench: edit a model, pick modes, press Run, watch the plots.

    Args:
        model: a catalog name (see ``adlab.list_models()``), model source, or a Model.
        sizes: fixed sizes to sweep (those up to the slider's n); default:
            log-spaced up to n.
        modes: which of "forward", "reverse", "numeric", "complex-step" and the
            second-order "hessian" and "hvp" to measure; default the first four.
        frameworks: which of "jax", "numpy", "torch", "tensorflow", "autograd"
            to run each mode on (``mode(framework)``); default JAX and the NumPy
            baseline. A mode a framework cannot do is not run, and the status says why.
        **options: ``n`` (the slider's start), ``compositions`` (how Hessian and
            HVP nest their modes; default forward-over-reverse), ``sparse``
            ("dense", "sparse" or "both": forward, reverse and Hessian from their
            sparsity pattern, whose picture and colors are shown), ``checkpoints``
            (for a model with loops, reverse once per choice of "false", "true" and
            "sqrt": its memory beside its time), ``compare_to`` (a saved run, its path or
            ``adlab.Run``: drawn dashed over the plots, compared in a table under them), ``steps``
            (draw the step-size curves, default True), ``steps_n_max`` (their
            largest n, default 1000), ``edits`` (folder for saved edits), ``device``
            (TF.js's backend for the TF.js series: "cpu", "wasm" or "webgl"),
            ``jaxjs_device`` (jax-js's: "wasm", "cpu", "webgl" or "webgpu"), and
            options of ``adlab.bench`` such as ``budget_s`` and ``repeats``.

    The logic lives in ``lab.state`` (a ``LabState``); the attributes and
    methods below delegate to it. The widgets are attributes too
    (``lab.run_button``, ``lab.n_slider``, ...), and ``lab.plots`` holds the
    Bokeh figures and their data sources.

    Example:
        >>> lab = adlab.Lab("rosenbrock", modes=["reverse"])
        >>> lab.modes
        ['reverse']
    """

    def __init__(
        self,
        model: str | Model = "normal_logpdf",
        sizes: Sequence[int] | None = None,
        modes: Sequence[AnyMode] | None = None,
        frameworks: Sequence[Backend] | None = None,
        **options: Any,
    ) -> None:
        device = options.pop("device", "cpu")  # a trait of the Lab's, not bench's option
        jaxjs_device = options.pop("jaxjs_device", None)  # so is jax-js's
        compare_to = options.pop("compare_to", None)  # a saved run drawn over the plots
        state = LabState(model, sizes, modes, frameworks, post=_kernel_post(), **options)
        state.device = device
        if jaxjs_device is not None:
            state.jaxjs_device = jaxjs_device
        self.state = state
        self.plots = LabPlots(show_compile=state.show_compile)
        self.compared = Compared(self.plots, compare_to) if compare_to is not None else None
        self._shown_run = -1
        self._shown_count = 0
        self._shown_steps = 0
        self._shown_patterns = 0
        self._build_widgets()
        super().__init__(children=self._layout(), layout=w.Layout(width="100%"))
        self._link()
        with state.lock:
            self._sync_plots()

    # -------------------------------------------------------------- build
    def _build_widgets(self) -> None:
        s = self.state
        self.model_dropdown = w.Dropdown(
            options=s.model_names, value=s.model_name, description="Model",
            layout=w.Layout(width="300px"),
        )  # fmt: skip
        self.reset_button = w.Button(
            description="Reset", icon="undo", tooltip="back to the original source",
            layout=w.Layout(width="90px"),
        )  # fmt: skip
        # the layout's height too: ipywidgets' layout view clears a height it was not given,
        # after the editor set its own, and a long model then grew the editor past the window
        self.editor = CodeEditor(s.source, height="300px",
                                 layout=w.Layout(width="100%", height="300px"))  # fmt: skip
        self.editor.add_class("adlab-editor")
        self.error_box = w.HTML()
        self.error_box.add_class("adlab-error")
        self.n_slider = w.FloatLogSlider(
            value=s.n, base=10, min=0, max=math.log10(s.n_max), step=0.01,
            description="n", readout_format=".0f", continuous_update=True,
            layout=w.Layout(width="100%"),
        )  # fmt: skip
        self.mode_checkboxes = mode_boxes(s)
        self.framework_checkboxes = framework_boxes(s)
        self.composition_checkboxes = composition_boxes(s)
        self.sparse_toggle = sparse_buttons(s)
        self.checkpoint_row, self.checkpoint_checkboxes = checkpoint_row(s)
        self.scheme_dropdown = w.Dropdown(
            options=list(type(s).scheme.values), value=s.scheme, description="scheme",
            layout=w.Layout(width="220px"),
        )  # fmt: skip
        self.jit_toggle = jit_buttons(s)
        # JavaScript series run in this page, where it answers (else Node): the line says which
        self.page_runner = PageRunner(shown=describe({}))
        s.page = self.page_runner
        self.device_toggle = w.ToggleButtons(
            options=list(type(s).device.values), value=s.device, description="TF.js",
            tooltips=["TF.js's cpu backend (plain JavaScript)", "TF.js's wasm backend (XNNPACK)",
                      "TF.js's webgl backend: in headless Chromium SwiftShader, software only"],
            style={"button_width": "64px"},
        )  # fmt: skip
        self.jaxjs_device_toggle = w.ToggleButtons(
            options=list(type(s).jaxjs_device.values), value=s.jaxjs_device, description="jax-js",
            tooltips=["jax-js's wasm backend", "jax-js's cpu backend (JavaScript's Math)",
                      "jax-js's webgl backend (the page only)",
                      "jax-js's webgpu backend (the page only; refused where it reads back "
                      "wrong values, as on headless Chromium's software adapter)"],
            style={"button_width": "64px"},
        )  # fmt: skip
        self.precision_toggle = w.ToggleButtons(
            options=list(type(s).precision.values), value=s.precision,
            style={"button_width": "72px"},
        )  # fmt: skip
        self.compile_toggle = w.Checkbox(value=s.show_compile, description="compile time",
                                         indent=False)  # fmt: skip
        self.run_button = w.Button(description="Run", button_style="primary", icon="play")
        self.stop_button = w.Button(description="Stop", button_style="danger", icon="stop")
        self.export_button = w.Button(description="Export", icon="download",
                                      tooltip="write the records as CSV and JSON, and a report "
                                      "as HTML that opens offline")  # fmt: skip
        self.export_js_button = w.Button(description="Export JS", icon="code",
                                         tooltip="write <model>.grad.mjs: f and its gradient "
                                         "as the ticked js series takes it, one JavaScript "
                                         "module for a web page")  # fmt: skip
        self.progress_bar = w.FloatProgress(value=0.0, min=0.0, max=1.0,
                                            layout=w.Layout(width="100%"))  # fmt: skip
        self.status_label = w.HTML(layout=w.Layout(width="100%"))
        self.plot_widget = LivePlot(self.plots.layout)
        # stable hooks for the browser test and for users' own CSS
        for widget, hook in (
            (self.model_dropdown, "adlab-model"),
            (self.n_slider, "adlab-n"),
            (self.run_button, "adlab-run"),
            (self.stop_button, "adlab-stop"),
            (self.export_js_button, "adlab-export-js"),
            (self.status_label, "adlab-status"),
            (self.plot_widget, "adlab-plots"),
            (self.progress_bar, "adlab-progress"),
            *((box, f"adlab-mode-{m}") for m, box in self.mode_checkboxes.items()),
            (self.sparse_toggle, "adlab-sparse"),
            (self.page_runner, "adlab-where"),
            (self.device_toggle, "adlab-device"),
            (self.jaxjs_device_toggle, "adlab-device-jaxjs"),
            *((box, f"adlab-framework-{f}") for f, box in self.framework_checkboxes.items()),
            *((box, f"adlab-checkpoint-{c}") for c, box in self.checkpoint_checkboxes.items()),
        ):
            widget.add_class(hook)

    def _layout(self) -> list[w.Widget]:
        editor = w.VBox([self.editor, self.error_box], layout=w.Layout(width="60%"))
        shown = [w.HTML(_STYLE), w.HBox([editor, controls(self)]), self.plot_widget]
        return shown + ([self.compared.widget] if self.compared else [])

    # --------------------------------------------------------------- link
    def _link(self) -> None:
        s = self.state
        traitlets.dlink((s, "model_names"), (self.model_dropdown, "options"))
        traitlets.link((self.model_dropdown, "value"), (s, "model_name"))
        traitlets.link((self.editor, "value"), (s, "source"))
        traitlets.dlink((s, "error"), (self.editor, "error_line"), _error_line)
        traitlets.dlink((s, "error_text"), (self.error_box, "value"), _error_html)
        traitlets.link((self.n_slider, "value"), (s, "n"), transform=(round, float))
        traitlets.link((self.scheme_dropdown, "value"), (s, "scheme"))
        traitlets.link((self.precision_toggle, "value"), (s, "precision"))
        traitlets.link((self.device_toggle, "value"), (s, "device"))
        traitlets.link((self.jaxjs_device_toggle, "value"), (s, "jaxjs_device"))
        traitlets.dlink((self.page_runner, "facts"), (self.page_runner, "shown"), describe)
        traitlets.link((self.compile_toggle, "value"), (s, "show_compile"))
        traitlets.dlink((s, "progress"), (self.progress_bar, "value"))
        traitlets.dlink((s, "status"), (self.status_label, "value"), html.escape)
        traitlets.dlink((s, "running"), (self.stop_button, "disabled"), lambda r: not r)
        link_boxes(self.mode_checkboxes, s, "modes")
        link_boxes(self.framework_checkboxes, s, "frameworks")
        link_boxes(self.composition_checkboxes, s, "compositions")
        link_boxes(self.checkpoint_checkboxes, s, "checkpoints")
        watch_refusals(s, self.mode_checkboxes, self.composition_checkboxes, self.sparse_toggle)
        self.run_button.on_click(lambda _: s.run())
        self.stop_button.on_click(lambda _: s.stop())
        self.reset_button.on_click(lambda _: s.reset_source())
        self.export_button.on_click(self._export_clicked)
        self.export_js_button.on_click(lambda _: s.export_js())  # the status says where
        s.observe(self._results_changed, ["run_id", "results", "steps", "steps_n", "patterns"])
        s.observe(self._compile_shown, "show_compile")

    def _export_clicked(self, _button: w.Button) -> None:
        try:  # the run (CSV, JSON) and its report, an HTML file that opens offline
            paths = self.state.export()
            other = self.compared.run if self.compared else None
            paths += (write_report(load(paths[1]), paths[1].with_suffix(".html"), other),)
        except OSError as exc:
            self.state.status = f"Export failed: {exc}"
            return
        here = Path.cwd()
        a, b, c = (p.relative_to(here) if p.is_relative_to(here) else p for p in paths)
        self.state.status = f"Exported {len(self.state.results)} records to {a}, {b} and {c}."

    # -------------------------------------------------------------- plots
    def _results_changed(self, _change: dict) -> None:
        with self.state.lock:
            self._sync_plots()

    def _sync_plots(self) -> None:
        """Bring the plots up to the state: clear on a new run, else stream what is new."""
        s = self.state
        if s.run_id != self._shown_run:
            self.plots.clear_records()
            self.plots.clear_steps(s.steps_n or None, s.precision if s.steps_n else None)
            self.plots.clear_patterns()
            self._shown_run, self._shown_count, self._shown_steps = s.run_id, 0, 0
            self._shown_patterns = 0
        if len(s.results) > self._shown_count:
            self.plots.add_records(s.results[self._shown_count :])
            self._shown_count = len(s.results)
        if len(s.steps) > self._shown_steps:
            self.plots.add_steps(s.steps[self._shown_steps :])
            self._shown_steps = len(s.steps)
        for shown in s.patterns[self._shown_patterns :]:  # a sparse kind's pattern, colored
            self.plots.show_pattern(shown.kind, shown.pattern, shown.coloring, shown.title())
        self._shown_patterns = len(s.patterns)
        if self.compared:
            self.compared.update(s.results)

    def _compile_shown(self, change: dict) -> None:
        with self.state.lock:
            self.plots.set_show_compile(change["new"])

    # ------------------------------------------------------------ display
    def _repr_mimebundle_(self, **kwargs: Any) -> dict | None:
        publish_bokehjs()  # before the widget's output: its views need window.Bokeh
        if self.plot_widget.stale:  # a new view starts from the points drawn so far
            with self.state.lock:
                self.plot_widget.refresh()
        return super()._repr_mimebundle_(**kwargs)

    # ------------------------------------------------------ programmatic
    def run(self, wait: bool = False, timeout: float | None = None) -> None:
        """Start a sweep (as the Run button does); ``wait=True`` blocks until it ends."""
        self.state.run(wait=wait, timeout=timeout)

    def stop(self) -> None:
        """Stop the sweep before its next measurement."""
        self.state.stop()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the current sweep ends; True if it did within ``timeout``."""
        return self.state.wait(timeout)

    def set_source(self, text: str) -> None:
        """Replace the model source (as typing in the editor does)."""
        self.state.set_source(text)

    def reset_source(self) -> None:
        """Back to the original source; the saved edit is forgotten."""
        self.state.reset_source()

    def export(self, stem: str | Path | None = None) -> tuple[Path, Path]:
        """Write the records to CSV and JSON; returns the two paths."""
        return self.state.export(stem)

    @property
    def source(self) -> str:
        """The editor's text."""
        return self.state.source

    @property
    def results(self) -> list:
        """The records of the current run (``adlab.Record``), in the order measured."""
        return list(self.state.results)

    @property
    def steps(self) -> list:
        """The step-size points (``adlab.StepRecord``) of the current run."""
        return list(self.state.steps)

    @property
    def error(self) -> Exception | None:
        """Why the current source does not run (a ``ModelError`` naming its line), or None."""
        return self.state.error

    @property
    def model(self) -> Model | None:
        """The model that runs: the last source that compiled."""
        return self.state.model

    @property
    def status(self) -> str:
        return self.state.status

    @property
    def running(self) -> bool:
        return self.state.running

    @property
    def crossovers(self) -> list:
        """Where one series overtakes another in the current run."""
        return list(self.state.crossovers)


def _error_line(exc: Exception | None) -> int:
    """The line the editor marks: the error's own (a ``ModelError``'s lineno), else none (0)."""
    return getattr(exc, "lineno", None) or 0


def _error_html(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>" if text else ""


delegate_options(Lab)

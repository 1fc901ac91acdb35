// The Lab's model editor: CodeMirror 6 as an anywidget module (adlab/lab/editor.py).
//
// Synced traits: `value` (the text; sent to the kernel when the editor loses focus,
// as the Textarea with continuous_update=False did), `error_line` (1-based, 0 = none:
// that line gets a red background and a marker in the gutter) and `height` (CSS).
import { ChangeSet, EditorSelection, EditorState, RangeSet, StateEffect, StateField } from "@codemirror/state";
import {
  Decoration,
  EditorView,
  GutterMarker,
  drawSelection,
  gutter,
  gutterLineClass,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { bracketMatching, defaultHighlightStyle, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { python } from "@codemirror/lang-python";

const setErrorLine = StateEffect.define();

// The kernel's line number, not a position mapped through edits: until the next
// compile the mark stays on the line the error message names.
const errorLine = StateField.define({
  create: () => 0,
  update(line, tr) {
    for (const e of tr.effects) if (e.is(setErrorLine)) line = e.value;
    return line;
  },
});

class ErrorMarker extends GutterMarker {
  toDOM() {
    const span = document.createElement("span");
    span.className = "cm-adlab-errorMarker";
    span.textContent = "\u25cf";
    span.title = "the error is on this line (see the message below the editor)";
    return span;
  }
}
const marker = new ErrorMarker();
// Only a class for the line's gutter elements (its number turns red): a marker in
// gutterLineClass is drawn in every gutter when it has a toDOM, hence a class of its own.
class ErrorGutterClass extends GutterMarker {}
ErrorGutterClass.prototype.elementClass = "cm-adlab-errorGutter";
const gutterClass = new ErrorGutterClass();
const lineMark = Decoration.line({ class: "cm-adlab-errorLine" });

// The start of the error's line, or null when there is none (or the text is shorter now).
function errorStart(state) {
  const n = state.field(errorLine);
  return n >= 1 && n <= state.doc.lines ? state.doc.line(n).from : null;
}

const errorDecorations = EditorView.decorations.compute([errorLine, "doc"], (state) => {
  const at = errorStart(state);
  return at === null ? Decoration.none : Decoration.set([lineMark.range(at)]);
});
const markerAt = (what) => (state) => {
  const at = errorStart(state);
  return at === null ? RangeSet.empty : RangeSet.of([what.range(at)]);
};
const errorGutter = [
  gutter({ class: "cm-adlab-errors", markers: (view) => markerAt(marker)(view.state) }),
  gutterLineClass.compute([errorLine, "doc"], markerAt(gutterClass)),
];

const theme = EditorView.theme({
  "&": {
    height: "100%",
    fontSize: "var(--jp-code-font-size, 13px)",
    color: "var(--jp-content-font-color1, #000)",
    backgroundColor: "var(--jp-layout-color0, #fff)",
    border: "1px solid var(--jp-border-color1, #bdbdbd)",
  },
  "&.cm-focused": { outline: "1px solid var(--jp-brand-color1, #1976d2)" },
  ".cm-scroller": { fontFamily: "var(--jp-code-font-family, monospace)", lineHeight: "1.35", overflow: "auto" },
  ".cm-gutters": {
    backgroundColor: "var(--jp-layout-color2, #eee)",
    color: "var(--jp-ui-font-color2, #757575)",
    borderRight: "1px solid var(--jp-border-color2, #e0e0e0)",
  },
  ".cm-adlab-errorLine": { backgroundColor: "rgba(176, 0, 32, 0.12)" },
  ".cm-adlab-errorGutter": { color: "#b00020", fontWeight: "bold" },
  ".cm-adlab-errors": { width: "1.1em" },
  ".cm-adlab-errorMarker": { color: "#b00020", cursor: "default" },
});

// The smallest change that turns `a` into `b`: common prefix and suffix kept, so a
// replacement from the kernel (Reset, another model) moves the cursor no more than needed.
function diff(a, b) {
  let start = 0;
  const n = Math.min(a.length, b.length);
  while (start < n && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--;
    endB--;
  }
  return ChangeSet.of({ from: start, to: endA, insert: b.slice(start, endB) }, a.length);
}

function render({ model, el }) {
  const send = (view) => {
    const text = view.state.doc.toString();
    if (text !== model.get("value")) {
      model.set("value", text);
      model.save_changes();
    }
  };
  const extensions = [
    lineNumbers(),
    errorGutter,
    highlightActiveLineGutter(),
    history(),
    drawSelection(),
    indentOnInput(),
    indentUnit.of("    "),
    EditorState.tabSize.of(4),
    bracketMatching(),
    highlightActiveLine(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    python(),
    keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
    errorLine,
    errorDecorations,
    theme,
    EditorView.domEventHandlers({ blur: (_event, view) => send(view) }),
  ];
  const fresh = (doc, selection) =>
    EditorState.create({ doc, selection, extensions }).update({
      effects: setErrorLine.of(model.get("error_line") || 0),
    }).state;

  el.classList.add("adlab-code-editor");
  // JupyterLab's shortcuts (a, b, d d, Shift+Enter ...) must not fire while typing here.
  el.setAttribute("data-lm-suppress-shortcuts", "true");
  el.style.height = model.get("height");
  const view = new EditorView({ state: fresh(model.get("value")), parent: el });

  const onValue = () => {
    const old = view.state.doc.toString();
    const text = model.get("value");
    if (old === text) return;
    // A new state: the kernel's text is a new document (Reset, another model), so
    // undo must not walk back into the old one; the cursor follows the change.
    const selection = view.state.selection.map(diff(old, text));
    view.setState(fresh(text, EditorSelection.create(selection.ranges, selection.mainIndex)));
  };
  const onError = () => view.dispatch({ effects: setErrorLine.of(model.get("error_line") || 0) });
  const onHeight = () => {
    el.style.height = model.get("height");
    view.requestMeasure();
  };
  model.on("change:value", onValue);
  model.on("change:error_line", onError);
  model.on("change:height", onHeight);
  return () => {
    model.off("change:value", onValue);
    model.off("change:error_line", onError);
    model.off("change:height", onHeight);
    view.destroy();
  };
}

export default { render };

// The code editor on the student's lesson page: CodeMirror 6 for Python.
//
// Bundled by build.sh into service/web/static/vendor/codemirror.js (one IIFE, no
// network access at run time), which defines:
//
//   window.CodeBlanksEditor.mount(textarea, options) -> editor
//
// Progressive enhancement: the page renders a plain <textarea name=...> inside
// its <form>. Without JavaScript that textarea is the editor and the form posts
// it. mount() hides the textarea and puts a CodeMirror editor right after it;
// every change is copied back into textarea.value (and again on "submit" and
// "formdata"), so a plain form submit posts the edited text.
//
// options (all optional):
//   ariaLabel        accessible name; default: the textarea's aria-label, the
//                    text of its <label for=id>, else "Python code editor"
//   readOnly         true: the text can be read, selected and copied, not edited
//   onChange(text)   called on every change of the text, setValue() included;
//                    the caller debounces it (e.g. for autosave)
//   completeWhileTyping  true: open completions while typing (default false:
//                    Ctrl-Space opens them, so Enter always means a new line)
//   minHeight, maxHeight  CSS lengths for the editing area (default "12em", none)
//   help             false: no screen-reader hint about leaving the editor
//
// editor: { view, getValue(), setValue(text), focus(), setReadOnly(bool), destroy() }
//
// Keyboard (no keyboard trap, WCAG 2.1.2):
//   Tab / Shift-Tab  indent / dedent (4 spaces; Tab at a cursor inserts spaces
//                    up to the next multiple of 4)
//   Escape, then Tab (or Shift-Tab)  moves focus to the next (previous)
//                    focusable element of the page. Any other key in between
//                    cancels; the window lasts ESCAPE_TAB_MS after Escape.
//   Ctrl-M (Shift-Alt-M on macOS)  toggles "Tab moves focus" mode for good
//   Enter            new line, indented like Python wants (4 more after ":")
//   Ctrl-Z / Ctrl-Y, Ctrl-Shift-Z  undo / redo
//   Ctrl-F           search (Ctrl-G next, Shift-Ctrl-G previous, Escape closes)
//   Ctrl-/           toggle comment
//   Ctrl-Space       complete names

import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentLess, indentMore } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import {
  bracketMatching,
  HighlightStyle,
  indentOnInput,
  indentUnit,
  syntaxHighlighting,
} from "@codemirror/language";
import { highlightSelectionMatches, search, searchKeymap } from "@codemirror/search";
import { Compartment, EditorSelection, EditorState } from "@codemirror/state";
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { tags as t } from "@lezer/highlight";

const INDENT = "    ";
// How long after Escape a Tab still leaves the editor. CodeMirror's own window
// is 2 s, short for someone who reads with a screen reader or types slowly.
const ESCAPE_TAB_MS = 10000;

// A light theme: every text colour is at least 6:1 against the white background
// and 4.5:1 against the selection colour (WCAG AA; most are AAA).
const theme = EditorView.theme(
  {
    "&": {
      color: "#1b1b1b",
      backgroundColor: "#ffffff",
      border: "1px solid #767676",
      borderRadius: "4px",
      fontSize: "15px",
      maxWidth: "100%",
      minWidth: "0",
    },
    "&.cm-focused": { outline: "3px solid #1d4ed8", outlineOffset: "1px" },
    ".cm-scroller": {
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", monospace',
      lineHeight: "1.5",
      overflowX: "auto",
    },
    ".cm-content": { caretColor: "#000000", padding: "4px 0" },
    ".cm-cursor, .cm-dropCursor": { borderLeft: "2px solid #000000" },
    ".cm-selectionBackground, ::selection": { backgroundColor: "#c9dcf7" },
    "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground": {
      backgroundColor: "#c9dcf7",
    },
    ".cm-activeLine": { backgroundColor: "#eef3fb" },
    ".cm-gutters": {
      backgroundColor: "#f2f2f2",
      color: "#4a4a4a",
      borderRight: "1px solid #bdbdbd",
    },
    ".cm-activeLineGutter": { backgroundColor: "#dde7f7", color: "#1b1b1b" },
    "&.cm-focused .cm-matchingBracket": {
      backgroundColor: "#d3ecd3",
      outline: "1px solid #1b1b1b",
    },
    "&.cm-focused .cm-nonmatchingBracket": {
      backgroundColor: "#fbd5d5",
      outline: "1px solid #b00020",
    },
    ".cm-selectionMatch": { backgroundColor: "#fff1b8" },
    ".cm-searchMatch": { backgroundColor: "#ffe58a", outline: "1px solid #6b4c00" },
    ".cm-searchMatch.cm-searchMatch-selected": { backgroundColor: "#ffc94d" },
    ".cm-panels": { backgroundColor: "#f2f2f2", color: "#1b1b1b" },
    ".cm-panels.cm-panels-top": { borderBottom: "1px solid #767676" },
    ".cm-panel.cm-search": { fontSize: "14px" },
    ".cm-panel.cm-search input, .cm-panel.cm-search button": { fontSize: "14px" },
    ".cm-textfield": { border: "1px solid #767676", maxWidth: "100%" },
    ".cm-button": { border: "1px solid #767676", backgroundImage: "none", backgroundColor: "#ffffff" },
    ".cm-tooltip": { border: "1px solid #767676", backgroundColor: "#ffffff", color: "#1b1b1b" },
    ".cm-tooltip-autocomplete > ul > li[aria-selected]": {
      backgroundColor: "#1d4ed8",
      color: "#ffffff",
    },
  },
  { dark: false },
);

const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword, t.operatorKeyword], color: "#7a1f8f", fontWeight: "bold" },
  { tag: [t.bool, t.null, t.self], color: "#7a1f8f" },
  { tag: [t.string, t.special(t.string), t.regexp], color: "#0b6b1e" },
  { tag: [t.number, t.integer, t.float], color: "#9a3412" },
  { tag: t.comment, color: "#595959", fontStyle: "italic" },
  { tag: [t.function(t.definition(t.variableName)), t.function(t.variableName)], color: "#1d4ed8" },
  { tag: [t.definition(t.className), t.className, t.standard(t.variableName)], color: "#0f5c6b" },
  { tag: [t.meta, t.annotation], color: "#6b4c00" },
  { tag: t.invalid, color: "#b00020", textDecoration: "underline" },
]);

// Tab: with a selection, indent the selected lines; at a cursor, insert spaces
// up to the next indentation stop. Never a tab character: this is Python.
function tabIndent(view) {
  const { state } = view;
  if (state.readOnly) return false;
  if (state.selection.ranges.some((r) => !r.empty)) return indentMore(view);
  const unit = INDENT.length;
  view.dispatch(
    state.changeByRange((range) => {
      const line = state.doc.lineAt(range.head);
      const col = range.head - line.from;
      const spaces = " ".repeat(unit - (col % unit));
      return {
        changes: { from: range.head, insert: spaces },
        range: EditorSelection.cursor(range.head + spaces.length),
      };
    }),
    { scrollIntoView: true, userEvent: "input.indent" },
  );
  return true;
}

let counter = 0;

function labelFor(textarea, options) {
  if (options.ariaLabel) return String(options.ariaLabel);
  const own = textarea.getAttribute("aria-label");
  if (own) return own;
  if (textarea.labels && textarea.labels.length) {
    const text = textarea.labels[0].textContent.trim();
    if (text) return text;
  }
  return "Python code editor";
}

function mount(textarea, options) {
  if (!textarea || textarea.tagName !== "TEXTAREA") {
    throw new TypeError("CodeBlanksEditor.mount needs a <textarea>");
  }
  options = options || {};
  const onChange = typeof options.onChange === "function" ? options.onChange : null;
  const readOnly = new Compartment();
  const n = ++counter;

  const wrapper = document.createElement("div");
  wrapper.className = "cb-editor";
  // min-width 0 lets a flex or grid parent shrink the editor to a 320 px iframe;
  // long lines then scroll inside the editor, never the page.
  wrapper.style.cssText = "max-width:100%;min-width:0;";

  let helpId = null;
  if (options.help !== false) {
    const help = document.createElement("span");
    helpId = "cb-editor-help-" + n;
    help.id = helpId;
    help.className = "cb-editor-help";
    help.textContent =
      "Tab indents. To leave the editor, press Escape, then Tab. Ctrl-M switches Tab between indenting and leaving.";
    // visually hidden, still read by screen readers
    help.style.cssText =
      "position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0;";
    wrapper.appendChild(help);
  }

  const sizes = {};
  sizes[".cm-content, .cm-gutter"] = { minHeight: options.minHeight || "12em" };
  if (options.maxHeight) sizes[".cm-scroller"] = { maxHeight: options.maxHeight };

  const contentAttrs = { "aria-label": labelFor(textarea, options) };
  const described = [textarea.getAttribute("aria-describedby"), helpId].filter(Boolean).join(" ");
  if (described) contentAttrs["aria-describedby"] = described;

  const readOnlyExt = (on) => [
    EditorState.readOnly.of(!!on),
    EditorView.contentAttributes.of({ "aria-readonly": on ? "true" : "false" }),
  ];

  const sync = (text) => {
    if (textarea.value !== text) textarea.value = text;
  };

  const state = EditorState.create({
    doc: textarea.value,
    extensions: [
      lineNumbers(),
      highlightActiveLineGutter(),
      highlightSpecialChars(),
      history(),
      drawSelection(),
      EditorState.allowMultipleSelections.of(true),
      EditorState.tabSize.of(4),
      indentUnit.of(INDENT),
      indentOnInput(),
      python(),
      syntaxHighlighting(highlight),
      bracketMatching(),
      closeBrackets(),
      autocompletion({ activateOnTyping: !!options.completeWhileTyping }),
      highlightActiveLine(),
      highlightSelectionMatches(),
      search({ top: true }),
      keymap.of([
        ...closeBracketsKeymap,
        ...defaultKeymap,
        ...searchKeymap,
        ...historyKeymap,
        ...completionKeymap,
        { key: "Tab", run: tabIndent, shift: indentLess },
      ]),
      // Escape arms "Tab leaves the editor" (CodeMirror's tab-focus mode); any
      // other key disarms it. keyup runs after CodeMirror's own 2 s arming.
      EditorView.domEventHandlers({
        keyup(event, view) {
          if (event.key === "Escape") view.setTabFocusMode(ESCAPE_TAB_MS);
          return false;
        },
      }),
      EditorView.contentAttributes.of(contentAttrs),
      readOnly.of(readOnlyExt(options.readOnly)),
      theme,
      EditorView.theme(sizes),
      EditorView.updateListener.of((update) => {
        if (!update.docChanged) return;
        const text = update.state.doc.toString();
        sync(text);
        if (onChange) onChange(text);
      }),
    ],
  });

  const view = new EditorView({ state, parent: wrapper });
  textarea.insertAdjacentElement("afterend", wrapper);
  const previousDisplay = textarea.style.display;
  textarea.style.display = "none";
  textarea.setAttribute("aria-hidden", "true");

  const getValue = () => view.state.doc.toString();
  const form = textarea.form;
  const onSubmit = () => sync(getValue());
  const onReset = () => {
    // the browser resets the textarea after the event: follow it afterwards
    setTimeout(() => setValue(textarea.value), 0);
  };
  if (form) {
    form.addEventListener("submit", onSubmit, true);
    form.addEventListener("formdata", onSubmit, true);
    form.addEventListener("reset", onReset);
  }

  function setValue(text) {
    text = text == null ? "" : String(text);
    if (text === getValue()) return;
    view.dispatch({
      changes: { from: 0, to: view.state.doc.length, insert: text },
      selection: EditorSelection.cursor(Math.min(view.state.selection.main.head, text.length)),
    });
  }

  return {
    view,
    getValue,
    setValue,
    focus() {
      view.focus();
    },
    setReadOnly(on) {
      view.dispatch({ effects: readOnly.reconfigure(readOnlyExt(on)) });
    },
    destroy() {
      sync(getValue());
      if (form) {
        form.removeEventListener("submit", onSubmit, true);
        form.removeEventListener("formdata", onSubmit, true);
        form.removeEventListener("reset", onReset);
      }
      view.destroy();
      wrapper.remove();
      textarea.style.display = previousDisplay;
      textarea.removeAttribute("aria-hidden");
    },
  };
}

window.CodeBlanksEditor = { mount };

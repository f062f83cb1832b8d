// editor.js - the Playground's editor: CodeMirror 6 with Python or
// JavaScript highlighting, and violations from /v1/analyze as inline
// markers (debounced as you type).
import { EditorState, Compartment } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching } from '@codemirror/language';
import { linter, lintGutter, forceLinting } from '@codemirror/lint';
import { python } from '@codemirror/lang-python';
import { javascript } from '@codemirror/lang-javascript';

const ANALYZE_DELAY_MS = 400;
// The gateway's Content-Security-Policy lets in style elements carrying this
// page's nonce only (CodeMirror injects its styles as style elements).
const meta = document.querySelector('meta[name="csp-nonce"]');
const NONCE = meta ? meta.getAttribute('content') : '';

/** The document offset of a 1-based line and column, clamped into the document. */
export function offsetOf(doc, line, column) {
  const l = doc.line(Math.min(Math.max(line || 1, 1), doc.lines));
  return Math.min(l.from + Math.max((column || 1) - 1, 0), l.to);
}

/** Violations ({rule, message, line, column, end_line, end_column}) as lint diagnostics. */
export function diagnostics(doc, violations) {
  return (violations || []).map((v) => {
    const from = offsetOf(doc, v.line, v.column);
    let to = offsetOf(doc, v.end_line || v.line, v.end_column || v.column);
    if (to <= from) to = Math.min(from + 1, doc.length);
    return { from, to, severity: 'error', source: v.rule, message: `${v.rule}: ${v.message}` };
  });
}

/**
 * A new editor in parent. analyze(code, language) resolves to the violations
 * (or null when the check could not run); onVerdict(answer) sees each one.
 */
export function createEditor(parent, { doc, language, analyze }) {
  const lang = new Compartment();
  let current = language;
  const languageExt = (l) => (l === 'nodejs' ? javascript() : python());
  const check = linter(async (view) => {
    const code = view.state.doc.toString();
    const violations = await analyze(code, current);
    return violations ? diagnostics(view.state.doc, violations) : [];
  }, { delay: ANALYZE_DELAY_MS });
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(), history(), highlightActiveLine(), indentOnInput(), bracketMatching(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        lang.of(languageExt(language)), lintGutter(), check,
        EditorView.contentAttributes.of({ 'aria-label': 'code', 'data-testid': 'editor' }),
        EditorView.cspNonce.of(NONCE),
      ],
    }),
  });
  return {
    view,
    get code() { return view.state.doc.toString(); },
    setCode(text) { view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }); },
    setLanguage(l) {
      current = l;
      view.dispatch({ effects: lang.reconfigure(languageExt(l)) });
      forceLinting(view);
    },
    recheck() { forceLinting(view); },
  };
}

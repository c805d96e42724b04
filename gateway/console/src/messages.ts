import { ApiCallError } from './api.js';
import { append, byId, h } from './dom.js';

/** Says what happened in the polite live region (screen readers read it when idle). */
export function announce(message: string): void {
  const status = byId('status');
  // Emptying first makes a repeated identical message be read again.
  status.textContent = '';
  window.setTimeout(() => {
    status.textContent = message;
  }, 50);
}

/** Shows an error in the alert region (read at once); errors from the API list every problem. */
export function showError(error: unknown, context?: string): void {
  const alert = byId('alert');
  alert.replaceChildren();
  const lead = context ? `${context}: ` : '';
  if (error instanceof ApiCallError) {
    append(alert, h('p', {}, `${lead}${error.message}`));
    if (error.problems.length > 0) {
      append(alert, h('ul', {}, ...error.problems.map((p) => h('li', {}, p.field ? `${p.field}: ${p.message}` : p.message))));
    }
    if (error.requestId) append(alert, h('p', { class: 'hint' }, `Request id: ${error.requestId}`));
  } else {
    append(alert, h('p', {}, `${lead}${error instanceof Error ? error.message : String(error)}`));
  }
  alert.hidden = false;
}

export function clearError(): void {
  const alert = byId('alert');
  alert.hidden = true;
  alert.replaceChildren();
}

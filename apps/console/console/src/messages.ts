import { PlatformApiError } from './api.js';
import { append, byId, h } from './dom.js';
import { reportOf } from './messages.format.js';

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
  if (error instanceof PlatformApiError) {
    const report = reportOf(error);
    append(alert, h('p', {}, `${lead}${report.message}`));
    if (report.problems.length > 0) append(alert, h('ul', {}, ...report.problems.map((problem) => h('li', {}, problem))));
    if (report.requestId) append(alert, h('p', { class: 'hint' }, `Request id: ${report.requestId}`));
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

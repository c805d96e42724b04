// The fields a key's form is made of, shared by the create form and an open key's editor: scope
// checkboxes (core's SCOPES from the gateway's meta) and one rate limit field per bucket, each form
// with its own id prefix so several forms live on the page.
import type { RateLimits, Scope } from './api.js';
import { h } from './dom.js';
import { limitsFromFields } from './keys.format.js';
import { getMeta } from './session.js';

const fieldId = (prefix: string, kind: string, name: string): string => `${prefix}-${kind}-${name.replace(/[^a-z0-9]/gi, '-')}`;

/** One checkbox per contract scope, those in `chosen` ticked; named `{prefix}-scope`. */
export function scopeChoices(prefix: string, chosen: readonly string[]): HTMLElement[] {
  return getMeta().scopes.map((scope) => {
    const id = fieldId(prefix, 'scope', scope);
    return h(
      'label',
      { class: 'choice', for: id },
      h('input', { type: 'checkbox', id, name: `${prefix}-scope`, value: scope, checked: chosen.includes(scope) }),
      scope,
    );
  });
}

/** The access choice (`{prefix}-access`) and the scopes it enables: unrestricted when `scopes` is null. */
export function accessFields(prefix: string, scopes: readonly string[] | null): HTMLFieldSetElement[] {
  const scopeSet = h(
    'fieldset',
    { disabled: scopes === null },
    h('legend', {}, 'Scopes'),
    h('div', { class: 'scope-groups' }, ...scopeChoices(prefix, scopes ?? [])),
  );
  const choice = (value: 'scoped' | 'unrestricted', label: string) => {
    const radio = h('input', { type: 'radio', name: `${prefix}-access`, value, checked: (scopes === null) === (value === 'unrestricted') });
    radio.addEventListener('change', () => (scopeSet.disabled = value === 'unrestricted'));
    return h('label', { class: 'choice' }, radio, ` ${label}`);
  };
  const access = h(
    'fieldset',
    {},
    h('legend', {}, 'Access'),
    choice('scoped', 'Chosen scopes'),
    choice('unrestricted', 'Unrestricted (every scope, including scopes added later)'),
  );
  return [access, scopeSet];
}

/** The form's scopes: null for unrestricted access, else the ticked ones (at least one). */
export function scopesFromForm(form: HTMLFormElement, prefix: string): Scope[] | null {
  if (form.querySelector<HTMLInputElement>(`input[name="${prefix}-access"]:checked`)?.value === 'unrestricted') return null;
  const ticked = [...form.querySelectorAll<HTMLInputElement>(`input[name="${prefix}-scope"]:checked`)].map((box) => box.value);
  const scopes = getMeta().scopes.filter((scope) => ticked.includes(scope));
  if (scopes.length === 0) throw new Error('Choose at least one scope, or Unrestricted access.');
  return scopes;
}

/**
 * A legend, a hint and one number field per rate limit bucket holding the key's own limit; an
 * empty field shows the platform's limit as its placeholder.
 */
export function limitFields(prefix: string, limits: RateLimits | null): HTMLElement[] {
  const { rate_limit_buckets: buckets, rate_limit_max: max } = getMeta();
  const hintId = `${prefix}-limits-hint`;
  const fields = buckets.map(({ name, limit }) => {
    const id = fieldId(prefix, 'limit', name);
    const input = h('input', {
      type: 'number',
      id,
      'data-bucket': name,
      min: 1,
      max,
      step: 1,
      inputmode: 'numeric',
      placeholder: String(limit),
      value: limits?.[name],
      'aria-describedby': hintId,
    });
    return h('div', { class: 'field' }, h('label', { for: id }, `${name} per minute`), input);
  });
  return [
    h('legend', {}, 'Rate limits'),
    h('p', { id: hintId, class: 'hint' }, 'Requests per minute for this key, per bucket. An empty field keeps the platform’s limit, shown in grey.'),
    h('div', { class: 'limit-fields' }, ...fields),
  ];
}

/** The limits typed under `container`: null when every field is empty (the platform's limits). */
export function limitsFromForm(container: HTMLElement): RateLimits | null {
  const fields = [...container.querySelectorAll<HTMLInputElement>('input[data-bucket]')].map((input) => ({
    bucket: input.dataset.bucket!,
    // A number field holds '' for text that is no number: kept as typed-but-wrong, not as empty.
    value: input.validity.badInput ? 'not a number' : input.value,
  }));
  const result = limitsFromFields(fields, getMeta().rate_limit_max);
  if ('problem' in result) throw new Error(result.problem);
  return result.rateLimits;
}

/** Pieces every page uses: the error banner, the scene picker, the score slider, status badges. */
import { ApiFailure, type Scene } from './api.js';
import { h } from './dom.js';

/** Shows an error as `CODE: message` (API errors carry the service's code and message). */
export function errorBox(err: unknown): HTMLElement {
  const code = err instanceof ApiFailure ? err.code : 'ERROR';
  const message = err instanceof Error ? err.message : String(err);
  return h(
    'div',
    { class: 'error', role: 'alert', 'data-code': code },
    h('strong', { class: 'code' }, code),
    ' ',
    h('span', { class: 'message' }, message),
  );
}

/** Replaces the content of `slot` with the error of `err` (or clears it). */
export function showError(slot: HTMLElement, err?: unknown): void {
  slot.replaceChildren(...(err === undefined ? [] : [errorBox(err)]));
}

export function scenePicker(scenes: readonly Scene[], name: string, preferred?: string): HTMLSelectElement {
  const select = h('select', { name, required: true });
  for (const sc of scenes)
    select.append(h('option', { value: sc.scene_code }, `${sc.scene_code} — ${sc.name}`));
  if (preferred && scenes.some((sc) => sc.scene_code === preferred)) select.value = preferred;
  return select;
}

/** A labelled 0..1 slider that shows its value; `onChange` fires when the user lets go. */
export function scoreSlider(
  label: string,
  value: number,
  onChange: (v: number) => void,
  live?: (v: number) => void,
): { el: HTMLElement; input: HTMLInputElement; set(v: number): void } {
  const input = h('input', {
    type: 'range',
    min: 0,
    max: 1,
    step: 0.01,
    value: value.toFixed(2),
    name: 'min_score',
    'aria-label': label,
  });
  const out = h('output', {}, value.toFixed(2));
  input.addEventListener('input', () => {
    out.textContent = Number(input.value).toFixed(2);
    live?.(Number(input.value));
  });
  input.addEventListener('change', () => onChange(Number(input.value)));
  return {
    el: h('label', { class: 'slider' }, h('span', {}, label), input, out),
    input,
    set(v: number) {
      input.value = v.toFixed(2);
      out.textContent = v.toFixed(2);
    },
  };
}

export const badge = (status: string): HTMLElement =>
  h('span', { class: `badge status-${status}`, 'data-status': status }, status);

export const when = (iso: string): string => new Date(iso).toLocaleString();

/**
 * A tiny element builder. Text always goes in as text nodes, never as HTML, so nothing a user
 * or the API wrote can become markup.
 */
export type Child = Node | string | number | null | undefined | false;

type Props = {
  class?: string;
  [name: `on${string}`]: ((event: never) => void) | undefined;
  [name: string]: unknown;
};

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2).toLowerCase(), value as EventListener);
    } else if (name === 'class') {
      el.className = String(value);
    } else if (name === 'value' || (name in el && typeof value !== 'string')) {
      (el as unknown as Record<string, unknown>)[name] = value;
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A message box that screen readers announce; empty and hidden until it has something to say. */
export type AlertBox = HTMLElement & { show(message: string, kind?: 'error' | 'ok'): void; clear(): void };

export function alertBox(): AlertBox {
  const box = h('div', { class: 'alert', role: 'alert', hidden: true, tabindex: -1 });
  return Object.assign(box, {
    show(message: string, kind: 'error' | 'ok' = 'error') {
      box.textContent = message;
      box.className = `alert alert-${kind}`;
      box.hidden = false;
    },
    clear() {
      box.textContent = '';
      box.hidden = true;
    },
  });
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? ''
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** Each unit of formatAgo, and how many of it make the next. */
const AGO_UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['minute', 60],
  ['hour', 24],
  ['day', 7],
  ['week', Number.POSITIVE_INFINITY],
];

/** How long ago `iso` was, in words ("5 minutes ago", "yesterday"); "just now" within a minute. */
export function formatAgo(iso: string, now = Date.now()): string {
  const ms = now - new Date(iso).getTime();
  if (!Number.isFinite(ms)) return '';
  let amount = Math.max(0, ms) / 60_000;
  if (amount < 1) return 'just now';
  const words = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  for (const [unit, perNext] of AGO_UNITS) {
    if (amount < perNext) return words.format(-Math.floor(amount), unit);
    amount /= perNext;
  }
  return '';
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * Moves the keyboard focus to `element` (a heading, a message), which need not be a control:
 * after an action removes or replaces what had the focus, it lands there, never on the page body.
 */
export function focusOn(element: HTMLElement | null | undefined): void {
  if (!element) return;
  if (!element.hasAttribute('tabindex')) element.setAttribute('tabindex', '-1');
  element.focus();
}

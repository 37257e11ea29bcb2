/**
 * A list's search box, with results as the person types: a labelled `<input type="search">` whose
 * words are searched once typing pauses for SEARCH_AFTER_MS (Enter searches at once), a status
 * line that screen readers announce (how many match), and its own alert for a search the API
 * refuses (too long). An empty box is no search: the list is the normal one again.
 *
 * The list that uses it loads its results; `newestOnly` keeps an answer that comes back after a
 * newer one was asked from ever being shown.
 */
import { alertBox, h } from '../dom';

/** A pause in typing this long sends the search: quick enough to feel live, one request a word. */
export const SEARCH_AFTER_MS = 200;

export interface SearchBox {
  /** The form (a search landmark) to put above the list. */
  element: HTMLElement;
  /** The results of the search shown, in words for the status line (a screen reader reads it). */
  found(words: string): void;
  /** Why the search failed (a 400 is the API's message), in the box's alert. */
  failed(message: string): void;
  /** No search: the status and the alert say nothing. */
  reset(): void;
}

export function searchBox(options: {
  label: string;
  /** The words already searched (from the address). */
  value?: string;
  /** Called with the words, trimmed, when they change: '' when the box is emptied. */
  onSearch(words: string): void;
}): SearchBox {
  const box = h('input', {
    type: 'search',
    name: 'q',
    value: options.value ?? '',
    autocomplete: 'off',
    enterkeyhint: 'search',
  });
  const status = h('p', { class: 'search-status muted', role: 'status' });
  const alert = alertBox();
  let searched = (options.value ?? '').trim();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const search = () => {
    clearTimeout(timer);
    const words = box.value.trim();
    if (words === searched) return;
    searched = words;
    options.onSearch(words);
  };
  box.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(search, SEARCH_AFTER_MS);
  });
  const element = h(
    'form',
    { class: 'search', role: 'search', 'aria-label': options.label },
    h('label', null, `${options.label} `, box),
    status,
    alert,
  );
  element.addEventListener('submit', (event) => {
    event.preventDefault();
    search();
  });
  return {
    element,
    found(words) {
      alert.clear();
      status.textContent = words;
    },
    failed(message) {
      status.textContent = '';
      alert.show(message);
    },
    reset() {
      alert.clear();
      status.textContent = '';
    },
  };
}

/**
 * Each call marks the start of a newer load and gives the way to ask, when its answer comes, whether
 * it is still the newest: a slow answer to words typed earlier never replaces a newer one's.
 */
export function newestOnly(): () => () => boolean {
  let newest = 0;
  return () => {
    const mine = ++newest;
    return () => mine === newest;
  };
}

/** The `q` parameter of the lists that search: one description of what matching does. */
import { LIMITS } from '../limits';

/** `q` on a list; `what`: the fields searched, `order`: how the results page. */
export function searchParam(what: string, order: string) {
  return {
    name: 'q',
    description: `Search ${what}: every word must match, case and diacritics folded; the last word also as a prefix (from 2 letters), a word of 5 letters or more also with one letter added, dropped or changed, and a "quoted phrase" word for word. Best matches first, newest first among equals; ${order} At most ${LIMITS.searchQueryMax} characters and ${LIMITS.searchWordsMax} words (400); empty, or with no word in it, is as if absent.`,
    schema: { type: 'string', maxLength: LIMITS.searchQueryMax },
  } as const;
}

/** Whether a setting is given: an empty value, or one of blanks only, is not. */
export function present(raw: string | undefined): raw is string {
  return raw !== undefined && raw.trim() !== '';
}

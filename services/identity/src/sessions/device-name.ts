/**
 * A session's device in words, from the User-Agent its login sent: "Chrome on Linux", "Safari on
 * iPhone", "Firefox on Windows", or "Unknown device". For a person looking at their sessions, not
 * for any decision: a User-Agent is whatever the client says.
 *
 * Our own few rules rather than a parser library: the list needs the browser's family and the
 * system, not versions or device models, and a dozen patterns do that with nothing to keep up.
 * Order matters: most browsers also name the ones they grew from (Edge and Opera say Chrome,
 * Chrome says Safari, iOS says "like Mac OS X", Android says Linux), so the more specific come
 * first. Each pattern is a plain search, linear in the 256 characters a stored User-Agent has at most.
 */

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|OPiOS|Opera)\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bVivaldi\//, 'Vivaldi'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\bChromium\//, 'Chromium'],
  [/\b(?:Chrome|HeadlessChrome|CriOS)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];

const SYSTEMS: [RegExp, string][] = [
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\biPod\b/, 'iPod'],
  [/\bAndroid\b/, 'Android'],
  [/\bWindows Phone\b/, 'Windows Phone'],
  [/\bWindows\b/, 'Windows'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\b(?:Macintosh|Mac OS X)\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

export const UNKNOWN_DEVICE = 'Unknown device';

const first = (rules: [RegExp, string][], text: string) => rules.find(([pattern]) => pattern.test(text))?.[1];

/** The browser and the system `userAgent` names, in words; UNKNOWN_DEVICE when it names neither. */
export function deviceName(userAgent: string | null | undefined): string {
  if (!userAgent) return UNKNOWN_DEVICE;
  const browser = first(BROWSERS, userAgent);
  const system = first(SYSTEMS, userAgent);
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? UNKNOWN_DEVICE;
}

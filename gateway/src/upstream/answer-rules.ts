/**
 * The gateway's rules on a service's answer, whatever carried it: a private answer (the request
 * carried a token, or identity answers with one) gets `Cache-Control: no-store`, whatever the
 * service said, so no browser or shared cache keeps it; the services' `Server-Timing` (database
 * and app time) reaches clients only when configured. Applied to the answer's headers before the
 * client gets them: by the socket transport to the service's answer as it arrives, by the
 * in-process one as the app writes its head.
 */
export interface AnswerHeaders {
  set(name: string, value: string): void;
  remove(name: string): void;
}

export function applyAnswerRules(
  headers: AnswerHeaders,
  { isPrivate, serverTiming }: { isPrivate: boolean; serverTiming: boolean },
): void {
  if (isPrivate) headers.set('cache-control', 'no-store');
  if (!serverTiming) headers.remove('server-timing');
}

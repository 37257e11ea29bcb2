/**
 * Runs `pass` every `intervalMs`, never two at once: a tick that comes while a pass still runs is
 * skipped, so a slow pass neither overlaps the next nor piles up a backlog behind it. A failed
 * pass goes to `onError`, and the next one runs as usual. The timer never keeps the process
 * alive; the returned function stops it and waits for a pass under way, so a shutdown never cuts
 * one in half.
 */
export function repeatEvery(
  intervalMs: number,
  pass: () => Promise<unknown>,
  onError: (err: unknown) => void,
): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = pass()
      .then(() => undefined, onError)
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

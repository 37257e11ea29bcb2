import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@cs/log';

/** A real logger whose lines a test can read back. */
export function captureLogger(name = 'test'): { logger: Logger; text(): string; entries(): Record<string, unknown>[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ name, level: 'debug', destination });
  return {
    logger,
    text: () => chunks.join(''),
    entries: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** For tests that do not read logs. */
export function silentLogger(): Logger {
  return createLogger({ name: 'test', level: 'silent' });
}

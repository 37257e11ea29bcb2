/**
 * Structured JSON logs (pino). Request bodies are never logged, and every field that could carry
 * a credential is redacted as a second line of defence.
 */
import pino from 'pino';

export type Logger = pino.Logger;

export interface LoggerOptions {
  name: string;
  level?: string;
  /** Where lines go; tests pass a stream to read what was logged. */
  destination?: pino.DestinationStream;
}

const REDACT = [
  'password',
  '*.password',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  '*.headers.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'secret',
  '*.secret',
];

export function createLogger({ name, level = 'info', destination }: LoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    base: { service: name },
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Any setting `X` may be given as a file, `X_FILE=/path`, as Docker Swarm and Kubernetes hand
 * secrets to a container (`/run/secrets/<name>`): a secret then never sits in the environment, where
 * `docker inspect` and crash reports show it. A file is read when its setting is read, at boot, and
 * only then: a variable of another program that happens to end in `_FILE` (`TF_CLI_CONFIG_FILE`,
 * `AWS_CONFIG_FILE`) is none of ours, and a file it names is never opened.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from './config-error';
import type { Env } from './index';
import { present } from './present';

export const FILE_SUFFIX = '_FILE';

/**
 * The raw value of setting `key` in `source`: `source[key]`, or, when `source[key_FILE]` is
 * given, the content of the file it names less one trailing newline (`echo secret > file` writes
 * one, and so do most editors); other whitespace is part of the value. A setting given both ways,
 * a file that cannot be read and an empty file each throw a ConfigError naming the key and the
 * path, never what the file holds. An empty `X_FILE` counts as not given.
 */
export function settingOf(source: Env, key: string): string | undefined {
  const fileKey = `${key}${FILE_SUFFIX}`;
  const path = source[fileKey];
  if (!present(path)) return source[key];
  if (present(source[key])) throw new ConfigError([`${key} and ${fileKey} are both set: give one`]);
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (err) {
    // The error's code only: its message is safe today, but what reaches the log is decided here.
    throw new ConfigError([
      `${fileKey} names a file that cannot be read (${path}): ${(err as NodeJS.ErrnoException).code ?? 'unknown error'}`,
    ]);
  }
  const value = content.replace(/\r?\n$/, '');
  if (value === '') throw new ConfigError([`${fileKey} names an empty file (${path})`]);
  return value;
}

/**
 * Any setting `X` may be given as a file, `X_FILE=/path`, as Docker Swarm and Kubernetes hand
 * secrets to a container (`/run/secrets/<name>`): a secret then never sits in the environment, where
 * `docker inspect` and crash reports show it. The file is read once, at boot, before any reader
 * sees the environment, so every reader (a spec's, identity's OIDC providers') finds `X` as if it
 * had been given directly.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from './config-error';
import type { Env } from './index';
import { present } from './present';

const SUFFIX = '_FILE';

/**
 * `env` with every non-empty `X_FILE` replaced by `X` holding that file's content, less one
 * trailing newline (`echo secret > file` writes one, and so do most editors); other whitespace is
 * part of the value. A setting given both ways, a file that cannot be read and an empty file are
 * each a problem, and all of them are thrown together as one ConfigError. A problem names the key
 * and the path, never what the file holds.
 */
export function withSettingFiles(env: Env): Env {
  const problems: string[] = [];
  const out: Env = {};
  const files: [string, string][] = [];
  for (const [key, value] of Object.entries(env)) {
    if (key.endsWith(SUFFIX) && key.length > SUFFIX.length) {
      if (present(value)) files.push([key, value]);
    } else {
      out[key] = value;
    }
  }
  for (const [fileKey, path] of files) {
    const key = fileKey.slice(0, -SUFFIX.length);
    if (present(env[key])) {
      problems.push(`${key} and ${fileKey} are both set: give one`);
      continue;
    }
    let content: string;
    try {
      content = readFileSync(path, 'utf8');
    } catch (err) {
      // The error's code only: its message is safe today, but what reaches the log is decided here.
      problems.push(
        `${fileKey} names a file that cannot be read (${path}): ${(err as NodeJS.ErrnoException).code ?? 'unknown error'}`,
      );
      continue;
    }
    const value = content.replace(/\r?\n$/, '');
    if (value === '') {
      problems.push(`${fileKey} names an empty file (${path})`);
      continue;
    }
    out[key] = value;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out;
}

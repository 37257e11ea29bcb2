/**
 * Each attempt at a service is a client span of its own, a child of the request's server span
 * (tracing.ts), and carries its trace context upstream in its headers. Retries run on timers, so
 * the parent context is captured when forwarding begins and passed to every attempt.
 */
import type { ClientRequest } from 'node:http';
import { type ClientSpan, startClientSpan } from '@cs/telemetry';
import type { Context } from '@opentelemetry/api';

export function startAttemptSpan(proxyReq: ClientRequest, target: string, method: string, parent: Context): ClientSpan {
  const span = startClientSpan(method, `${target}${proxyReq.path}`, method, parent);
  for (const [header, value] of Object.entries(span.headers)) proxyReq.setHeader(header, value);
  return span;
}

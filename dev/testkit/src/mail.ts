/**
 * The e-mail the system sent, read back from the test run's Mailpit (MAIL_API_URL, set by the
 * global setup) through its HTTP API. Mailpit keeps every message of the run, for every worker:
 * a test uses an address of its own and asks only about that one.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface ReceivedMail {
  id: string;
  subject: string;
  text: string;
  html: string;
  /** The To addresses, lowercase. */
  to: string[];
  /** When Mailpit received it. */
  date: Date;
}

interface Address {
  Address: string;
}

/** One entry of Mailpit's lists (`/api/v1/search`); null lists are empty ones. */
interface Summary {
  ID: string;
  To: Address[] | null;
  Cc: Address[] | null;
  /** Recipients of the envelope that no header names land here. */
  Bcc: Address[] | null;
  Subject: string;
  Created: string;
}

interface Message {
  ID: string;
  Subject: string;
  Text: string;
  HTML: string;
  To: Address[] | null;
}

const POLL_MS = 100;
const PAGE = 200;

function apiUrl(): string {
  const url = process.env.MAIL_API_URL;
  if (!url) {
    throw new Error('MAIL_API_URL is not set: no Mailpit to read mail from (an external SMTP_URL needs it too)');
  }
  return url.replace(/\/+$/, '');
}

async function get<T>(path: string): Promise<T> {
  const url = `${apiUrl()}${path}`;
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) }).catch((err: Error) => {
    throw new Error(
      `Mailpit at ${apiUrl()} did not answer GET ${path}: ${(err.cause as Error)?.message ?? err.message}`,
    );
  });
  if (!res.ok) throw new Error(`Mailpit at ${apiUrl()} answered GET ${path} with ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** Every message to `address` (To, Cc or envelope), newest first, each once. */
async function* messagesTo(address: string): AsyncGenerator<Summary> {
  // Mailpit's search matches part of an address (ada@ also finds bada@): the exact check is ours.
  const query = encodeURIComponent(`addressed:"${address}"`);
  const seen = new Set<string>();
  for (let start = 0; ; start += PAGE) {
    const page = await get<{ messages: Summary[]; messages_count: number }>(
      `/api/v1/search?query=${query}&start=${start}&limit=${PAGE}`,
    );
    for (const message of page.messages) {
      // Mail that arrives meanwhile shifts the pages: a message may come round twice.
      if (seen.has(message.ID)) continue;
      seen.add(message.ID);
      const recipients = [...(message.To ?? []), ...(message.Cc ?? []), ...(message.Bcc ?? [])];
      if (recipients.some((r) => r.Address.toLowerCase() === address)) yield message;
    }
    if (page.messages.length < PAGE || start + PAGE >= page.messages_count) return;
  }
}

/** The newest message to `address` received at or after `since` (with `subject`, when given), if there is one yet. */
async function newestTo(
  address: string,
  since: Date | undefined,
  subject: string | undefined,
): Promise<Summary | undefined> {
  for await (const message of messagesTo(address)) {
    // Newest first: once one is older than `since`, so are the rest.
    if (since && new Date(message.Created).getTime() < since.getTime()) return undefined;
    if (subject === undefined || message.Subject === subject) return message;
  }
  return undefined;
}

/**
 * Waits for the newest e-mail to `to` (received at or after `since`, and with `subject`, when
 * given), polling Mailpit, and fails after `timeoutMs` (10 s) saying what it waited for. An account
 * gets mail of several kinds (registration sends a verification link as soon as it has answered):
 * `subject` names the kind a test waits for.
 */
export async function waitForMail(
  to: string,
  { timeoutMs = 10_000, since, subject }: { timeoutMs?: number; since?: Date; subject?: string } = {},
): Promise<ReceivedMail> {
  const address = to.toLowerCase();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await newestTo(address, since, subject);
    if (found) {
      const message = await get<Message>(`/api/v1/message/${encodeURIComponent(found.ID)}`);
      return {
        id: message.ID,
        subject: message.Subject,
        text: message.Text,
        html: message.HTML,
        to: (message.To ?? []).map((r) => r.Address.toLowerCase()),
        date: new Date(found.Created),
      };
    }
    if (Date.now() >= deadline) {
      const after = `${since ? ` received since ${since.toISOString()}` : ''}${subject ? ` titled "${subject}"` : ''}`;
      const count = await mailsTo(address);
      throw new Error(
        `waitForMail: no e-mail to ${address}${after} within ${timeoutMs} ms (Mailpit holds ${count} to that address in all)`,
      );
    }
    await sleep(POLL_MS);
  }
}

/** How many e-mails `to` has received in this test run. */
export async function mailsTo(to: string): Promise<number> {
  let count = 0;
  for await (const _ of messagesTo(to.toLowerCase())) count++;
  return count;
}

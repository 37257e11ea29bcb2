/**
 * The streams of this process, fed from the bus: one follower reads the bus for all of them, and
 * each event visits the streams filed for it (audience.ts) and goes to those whose subscription lets
 * it through (topics.ts).
 *
 * A stream that resumes (Last-Event-ID) reads what it missed from the bus first, a page at a time,
 * while the follower's events for it wait in a buffer; then it takes from the buffer what it does
 * not have yet, and goes live. Ids only go up, and a stream never sends an id at or before the
 * newest it has passed, so nothing is sent twice; it joins the follower before its first read, so
 * nothing falls between the read and the live events. When the bus no longer has all it missed,
 * the stream gets `reset` instead, and the live events from there.
 */
import { compareIds, type EventBus, type StoredEvent } from '@cs/event-bus';
import type { Logger } from '@cs/log';
import { Audience } from './audience';
import type { EventStream } from './event-stream';
import { delivers, type Subscription } from './topics';

/** Events read from the bus per page while a stream catches up. */
const PAGE = 500;

export interface Subscriber {
  subscription: Subscription;
  /** The caller, for protected topics; undefined when anonymous. */
  userId: string | undefined;
  stream: EventStream;
}

interface Member extends Subscriber {
  /**
   * The newest id this stream has passed (sent, or not for it) among those it was offered. Once
   * it is live, it has passed every event up to the follower's position: those not offered were
   * not for it (audience.ts).
   */
  passed: string;
  /** Live events waiting while the stream catches up; null once it is live. */
  waiting: StoredEvent[] | null;
}

export interface Membership {
  /** Resolves once the stream has caught up and gets live events. */
  live: Promise<void>;
  /** An event of the stream's own (`auth.expired`), under the id of the newest it has passed. */
  say(event: string, data: unknown): void;
}

export interface Hub {
  /** Starts following the bus from its newest event. */
  start(): Promise<void>;
  /** Adds a stream, resuming after `lastEventId` when given. */
  join(subscriber: Subscriber, lastEventId?: string): Membership;
  /** Ends every stream, and those that join from now on. */
  stop(): void;
}

export function createHub(bus: EventBus, logger: Logger): Hub {
  const members = new Set<Member>();
  /** The same members, filed by the events they may get. */
  const audience = new Audience<Member>();
  /** The newest id the follower has delivered. */
  let position = '0-0';
  let follower: { stop(): void } | undefined;
  let stopped = false;

  const pass = (member: Member, event: StoredEvent) => {
    if (compareIds(event.id, member.passed) <= 0) return;
    member.passed = event.id;
    if (delivers(member.subscription, member.userId, event)) {
      member.stream.send(event.id, `${event.topic}.${event.kind}`, event.data);
    }
  };

  const deliver = (events: StoredEvent[]) => {
    for (const event of events) {
      position = event.id;
      for (const member of audience.of(event)) {
        if (member.waiting) member.waiting.push(event);
        else pass(member, event);
      }
    }
  };

  return {
    async start() {
      position = await bus.newest();
      follower = bus.follow(position, deliver, (err) =>
        logger.warn({ err: String(err) }, 'realtime: the bus does not answer'),
      );
    },

    join(subscriber, lastEventId) {
      const member: Member = { ...subscriber, passed: position, waiting: lastEventId === undefined ? null : [] };
      // Stopping (the process drains): the stream ends at once, and its client resumes elsewhere.
      if (stopped) subscriber.stream.end();
      else {
        members.add(member);
        audience.add(member);
      }
      subscriber.stream.onEnd(() => {
        members.delete(member);
        audience.delete(member);
      });
      return {
        live:
          lastEventId === undefined
            ? Promise.resolve()
            : catchUp(member, lastEventId).catch((err: unknown) => {
                // The bus did not answer: the client reconnects, with its Last-Event-ID.
                logger.warn({ err: String(err) }, 'realtime: a stream could not catch up; ended');
                subscriber.stream.end();
              }),
        say: (event, data) => subscriber.stream.send(member.waiting ? member.passed : position, event, data),
      };
    },

    stop() {
      stopped = true;
      follower?.stop();
      for (const member of members) member.stream.end();
    },
  };

  /** Sends what `member` missed after `lastEventId`, then what waited meanwhile; then it is live. */
  async function catchUp(member: Member, lastEventId: string): Promise<void> {
    const { stream } = member;
    member.passed = lastEventId;
    for (;;) {
      const read = await bus.after(member.passed, PAGE);
      if (!stream.open) return;
      if (read.gap) {
        // What it missed is gone: the client reloads, and gets what comes after this point.
        member.passed = position;
        stream.send(position, 'reset', {});
        break;
      }
      for (const event of read.events) pass(member, event);
      if (read.events.length < PAGE) break;
    }
    for (const event of member.waiting ?? []) pass(member, event);
    member.waiting = null;
  }
}

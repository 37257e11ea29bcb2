/**
 * The streams of this process, fed from the bus: one follower reads the bus for all of them, and
 * each event visits the streams filed for it (audience.ts) and goes to those whose subscription lets
 * it through (topics.ts). An event is made into its frame once, and every stream that gets it
 * writes that one frame; what they hold is watched by the process's budget (stream-budget.ts).
 *
 * A stream that resumes (Last-Event-ID) reads what it missed from the bus first, from the
 * audiences it may see (not the whole bus), a page at a time bounded in count and bytes, each
 * page once the last has left for the client; meanwhile the follower's events for it wait in a
 * buffer. Then it takes from the buffer what it does not have yet, and goes live. Ids only go up,
 * and a stream never sends an id at or before the newest it has passed, so nothing is sent twice;
 * it joins the follower before its first read, so nothing falls between the read and the live
 * events. A buffer that fills while a slow resume reads is dropped, and what it held is read from
 * the bus instead. When the bus no longer has all it missed, the stream gets `reset` instead, and
 * the live events from there.
 */
import { eventName, type LiveEvent, STREAM_EVENTS } from '@cs/contract';
import { compareIds, type EventBus, type StoredEvent } from '@cs/event-bus';
import type { Logger } from '@cs/log';
import { Audience, resumeAudiences } from './audience';
import { type EventStream, frameOf } from './event-stream';
import type { StreamBudget } from './stream-budget';
import { delivers, type Subscription } from './topics';

/** Events, and bytes of them, read from the bus per page while a stream catches up. */
const PAGE = 200;
const PAGE_BYTES = 256 * 1_024;
/** Live events that may wait for one stream while it catches up; past it, they are read from the bus. */
const MAX_WAITING = 1_000;

/** An event of the bus, as the contract's vocabulary names it (@cs/contract events.ts). */
type BusLiveEvent = StoredEvent<LiveEvent>;

const frameOfEvent = (event: BusLiveEvent): Buffer => frameOf(event.id, eventName(event.topic, event.kind), event.data);

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
  waiting: BusLiveEvent[] | null;
  /** Waiting events were dropped (too many): the catch-up reads on from the bus. */
  overflowed: boolean;
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

export function createHub(bus: EventBus<LiveEvent>, budget: StreamBudget, logger: Logger): Hub {
  const members = new Set<Member>();
  /** The same members, filed by the events they may get. */
  const audience = new Audience<Member>();
  /** The newest id the follower has delivered. */
  let position = '0-0';
  let follower: { stop(): void } | undefined;
  let stopped = false;

  /** Passes `event` to `member`, sending its frame (made once, by `frame`) if it is for it; whether it was sent. */
  const pass = (member: Member, event: BusLiveEvent, frame: () => Buffer): boolean => {
    if (compareIds(event.id, member.passed) <= 0) return false;
    member.passed = event.id;
    if (!delivers(member.subscription, member.userId, event)) return false;
    member.stream.sendFrame(frame());
    return true;
  };

  const deliver = (events: BusLiveEvent[]) => {
    for (const event of events) {
      position = event.id;
      let made: Buffer | undefined;
      const frame = () => {
        made ??= frameOfEvent(event);
        return made;
      };
      let sent = 0;
      for (const member of audience.of(event)) {
        if (member.waiting) wait(member, event);
        else if (pass(member, event, frame)) sent++;
      }
      if (made) budget.queued(made.length * sent);
    }
  };

  const wait = (member: Member, event: BusLiveEvent) => {
    const waiting = member.waiting as BusLiveEvent[];
    if (waiting.length >= MAX_WAITING) {
      waiting.length = 0;
      member.overflowed = true;
    }
    waiting.push(event);
  };

  return {
    async start() {
      position = await bus.newest();
      follower = bus.follow(position, deliver, (err) =>
        logger.warn({ err: String(err) }, 'realtime: the bus does not answer'),
      );
    },

    join(subscriber, lastEventId) {
      const member: Member = {
        ...subscriber,
        passed: position,
        waiting: lastEventId === undefined ? null : [],
        overflowed: false,
      };
      // Stopping (the process drains): the stream ends at once, and its client resumes elsewhere.
      if (stopped) subscriber.stream.end();
      else {
        members.add(member);
        audience.add(member);
        budget.watch(subscriber.stream);
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
    const scope = { audiences: resumeAudiences(member), maxBytes: PAGE_BYTES };
    member.passed = lastEventId;
    for (;;) {
      const read = await bus.after(member.passed, PAGE, scope);
      if (!stream.open) return;
      if (read.gap) {
        // What it missed is gone: the client reloads, and gets what comes after this point.
        member.passed = position;
        stream.send(position, STREAM_EVENTS.reset, {});
        break;
      }
      for (const event of read.events) pass(member, event, () => frameOfEvent(event));
      if (!read.more && !member.overflowed) break;
      member.overflowed = false;
      // The next page once this one has left: a client that does not read holds one page at most.
      await stream.drained();
      if (!stream.open) return;
    }
    for (const event of member.waiting ?? []) pass(member, event, () => frameOfEvent(event));
    member.waiting = null;
  }
}

/**
 * The baseline for login: bcrypt.compare at cost 12 on the libuv pool, `concurrency` at a time,
 * for `durationS`, in a bare process. argv: concurrency, durationS, cost (12). Prints compares per second.
 */
import bcrypt from 'bcrypt';

async function main(): Promise<void> {
  const concurrency = Number(process.argv[2] ?? 4);
  const durationS = Number(process.argv[3] ?? 5);
  const hash = await bcrypt.hash('correct horse battery', Number(process.argv[4] ?? 12));
  let done = 0;
  const deadline = Date.now() + durationS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        await bcrypt.compare('correct horse battery', hash);
        // Like autocannon, count only what completed in time, not what was in flight at the end.
        if (Date.now() <= deadline) done += 1;
      }
    }),
  );
  process.stdout.write(`${JSON.stringify({ rps: done / durationS, requests: done })}\n`);
}

void main();

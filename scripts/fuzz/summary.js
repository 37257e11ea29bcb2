// The end of scripts/fuzz.sh's output: per operation, how many of the fuzzer's requests succeeded
// (a 2xx, or the 3xx of a navigation: the sign-in's start and callback), out of how many. It reads
// the counts scripts/fuzz/hooks.py wrote when schemathesis ended. Exits 1 when there are none:
// the hooks did not run.
const { readFileSync } = require('node:fs');

let counts;
try {
  counts = JSON.parse(readFileSync(process.argv[2], 'utf8'));
} catch (error) {
  console.error(`fuzz: no counts from the hooks (${error.message})`);
  process.exit(1);
}
const rows = Object.entries(counts).map(([operation, byClass]) => {
  const total = Object.values(byClass).reduce((a, b) => a + b, 0);
  const ok = (byClass['2xx'] ?? 0) + (byClass['3xx'] ?? 0);
  return { operation, ok, total };
});
rows.sort((a, b) => a.operation.localeCompare(b.operation));
const width = Math.max(...rows.map((r) => r.operation.length));
console.log('fuzz: requests that succeeded (2xx, or a navigation\u2019s 3xx), per operation');
for (const { operation, ok, total } of rows) {
  console.log(`  ${operation.padEnd(width)}  ${String(ok).padStart(5)} of ${String(total).padStart(5)}`);
}
const none = rows.filter((r) => r.ok === 0).map((r) => r.operation);
const sum = (key) => rows.reduce((a, r) => a + r[key], 0);
console.log(
  `fuzz: ${sum('ok')} of ${sum('total')} requests succeeded; ${rows.length - none.length} of ${rows.length} operations had one`,
);
if (none.length) console.log(`fuzz: never succeeded: ${none.join(', ')}`);

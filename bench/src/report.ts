/** The whole run's report, bench/results/latest.{json,md}: a table of every scenario measured. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { attackRows, attackSection } from './attacks/report';
import type { AttacksReport } from './attacks/report-types';
import { pocketbaseRows, pocketbaseSection } from './pocketbase/report';
import type { PocketBaseReport } from './pocketbase/report-types';
import type { Report, Row } from './report-json';
import { writeResults } from './results';
import { OUT } from './run-settings';
import { authCostRows } from './scenarios/auth-cost';
import { gatewayHopRows } from './scenarios/gateway-hop';
import { loginRows } from './scenarios/login';
import { memoryRows } from './scenarios/memory';
import { multipartRows } from './scenarios/multipart';
import { notModifiedRows } from './scenarios/not-modified';
import { observabilityRows } from './scenarios/observability';
import { publicListRows } from './scenarios/public-list';
import { type RealtimeReport, realtimeRows } from './scenarios/realtime';
import type { SearchReport } from './scenarios/search';
import { type SessionsReport, sessionRows } from './scenarios/sessions';
import { type ThumbnailsReport, thumbnailRows } from './scenarios/thumbnails';
import { uploadLinkRows } from './scenarios/upload-links';
import { volumeRows } from './scenarios/volume';
import { searchRows, searchSection } from './search/report';

/**
 * Writes latest.{json,md}. A scenario run alone (BENCH_ONLY) replaces its own figures and keeps
 * those of the other scenarios measured alone before it, each with when it was measured.
 */
export function writeReport(report: Report): void {
  if (report.only) {
    const file = join(OUT, 'latest.json');
    const previous = (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}) as Report;
    const measuredAlone = previous.only ? (previous.measuredAlone ?? { [previous.only]: previous.when }) : {};
    report = {
      ...report,
      measuredAlone: { ...measuredAlone, [report.only]: report.when },
      scenarios: { ...(previous.only ? previous.scenarios : {}), ...report.scenarios },
    };
  }
  writeResults(OUT, 'latest', report, markdown);
}

function markdown(r: Report): string {
  const s = r.scenarios;
  const attacks = s.attacks as AttacksReport | undefined;
  const sessions = s.sessions as SessionsReport | undefined;
  const realtime = s.realtime as RealtimeReport | undefined;
  const pocketbase = s.pocketbase as PocketBaseReport | undefined;
  const search = s.search as SearchReport | undefined;
  const rows = [
    ...(s.gatewayHop ? everyScenarioRows(s) : []),
    ...(s.uploadsOneProcess ? uploadLinkRows(s.uploadsOneProcess, ', every part in one process') : []),
    ...(attacks ? attackRows(attacks) : []),
    ...(sessions ? sessionRows(sessions) : []),
    ...(realtime ? realtimeRows(realtime) : []),
    ...(pocketbase ? pocketbaseRows(pocketbase) : []),
    ...(search ? searchRows(search) : []),
    ...(s.thumbnails ? thumbnailRows(s.thumbnails as ThumbnailsReport) : []),
  ];
  const m = r.machine;
  return [
    `# Benchmark ${r.when}`,
    '',
    `${m.cores} cores (${m.cpu}), ${m.memoryGb} GB, Node ${m.node}; MongoDB protocol: ${m.mongo}; S3: ${m.storage}.`,
    m.note ? `\n> ${m.note}\n` : '',
    r.only
      ? `Scenarios measured alone (BENCH_ONLY): ${Object.entries(r.measuredAlone ?? { [r.only]: r.when })
          .map(([name, when]) => `${name} at ${when}`)
          .join(', ')}; the last whole run's figures are in this file's history.`
      : `Each figure is the median of ${r.settings.rounds} interleaved rounds of ${r.settings.durationS} s; soak ${r.settings.soakS} s. Whole run ${r.durationS} s. Scenario 9's ratios are the median of its round-by-round ratios to off.`,
    '',
    '| scenario | measured | ratio | goal |',
    '|---|---|---|---|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    ...(attacks ? [attackSection(attacks)] : []),
    ...(pocketbase ? [pocketbaseSection(pocketbase)] : []),
    ...(search ? [searchSection(search)] : []),
  ].join('\n');
}

/** The rows of scenarios 1 to 10, and memory: those of the whole run. */
function everyScenarioRows(s: Report): Row[] {
  return [
    ...gatewayHopRows(s.gatewayHop),
    ...authCostRows(s.authCost),
    ...loginRows(s.login),
    ...publicListRows(s.publicList),
    ...volumeRows(s.volume),
    ...uploadLinkRows(s.uploadLinks),
    ...multipartRows(s.multipart),
    ...notModifiedRows(s.notModified),
    ...observabilityRows(s.observability),
    ...memoryRows(s.memory),
  ];
}

export { type QueryWord, readSearch, type SearchQuery } from './query';
export type { FieldBoosts } from './relevance';
export { createScanRanking, type ScanRanking } from './scan-ranking';
export { type Ranked, TextIndex } from './text-index';

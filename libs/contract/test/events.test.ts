/**
 * The live-update vocabulary holds together: what it names is in the OpenAPI document, and the
 * document lists every topic as the vocabulary has it.
 */
import { describe, expect, it } from '@jest/globals';
import {
  isProtectedTopic,
  openApiDocument,
  PROTECTED_TOPICS,
  TOPIC_DESCRIPTIONS,
  TOPIC_DOCUMENTS,
  TOPICS,
} from '../src';

interface Parameter {
  name: string;
  in: string;
  description: string;
  example?: string;
}

describe('the live-update vocabulary', () => {
  it('every topic’s document is a schema of the OpenAPI document', () => {
    const schemas = Object.keys(openApiDocument.components.schemas);
    for (const topic of TOPICS)
      expect({ topic, known: schemas.includes(TOPIC_DOCUMENTS[topic]) }).toEqual({ topic, known: true });
  });

  it('the protected topics are topics, and the last of them, so that the document can say “the last ones”', () => {
    expect(TOPICS.slice(-PROTECTED_TOPICS.length)).toEqual(PROTECTED_TOPICS);
    expect(TOPICS.filter(isProtectedTopic)).toEqual(PROTECTED_TOPICS);
  });

  it('the document’s topics parameter names each topic with what it carries, and its example asks for every one', () => {
    const parameters = openApiDocument.paths['/api/realtime'].get.parameters as readonly Parameter[];
    const topics = parameters.find((p) => p.in === 'query' && p.name === 'topics');
    for (const topic of TOPICS) expect(topics?.description).toContain(`\`${topic}\` (${TOPIC_DESCRIPTIONS[topic]})`);
    expect(topics?.example?.split(',')).toEqual([...TOPICS]);
  });
});

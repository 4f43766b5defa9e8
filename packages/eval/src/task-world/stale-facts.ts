import type { Random } from '@agentflow/core';
import { ATTRIBUTES, type Attribute, describeFact, type WorldEntity } from './templates';
import type { TaskWorldDocument } from './types';

/** What ends a stale entry's text: the cue a careful planner reads before it uses the number. */
export const STALE_FACT_MARK = '(outdated)';
/** The word a check adds to a lookup's query; only a stale fact's current entry holds it. */
export const CURRENT_FACT_WORD = 'now';

/**
 * The stale entry of a fact, e.g. title `Riri cats`, text `Riri had 7 cats (outdated).`. It is
 * one term shorter than the current entry and shares its title's terms, so BM25 ranks it first
 * for the plain query `Riri cats`: the lookup returns a plausible decoy.
 */
export function describeStaleFact(entity: WorldEntity, attribute: Attribute, staleValue: number): { title: string; text: string } {
  return { title: `${entity.name} ${attribute}`, text: `${entity.name} had ${staleValue} ${attribute} ${STALE_FACT_MARK}.` };
}

/**
 * The current entry of a fact that also has a stale one, e.g. title `Riri cats now`, text
 * `Riri has 3 cats now.`: the check query `Riri cats now` ranks it first (its own term, twice).
 */
export function describeCurrentFact(entity: WorldEntity, attribute: Attribute): { title: string; text: string } {
  return {
    title: `${entity.name} ${attribute} ${CURRENT_FACT_WORD}`,
    text: `${entity.name} has ${entity.facts[attribute]} ${attribute} ${CURRENT_FACT_WORD}.`,
  };
}

/** The query that checks a lookup whose result was stale: `Riri cats` becomes `Riri cats now`. */
export const checkQueryOf = (query: string): string => `${query} ${CURRENT_FACT_WORD}`;

/** True for a check query (`Riri cats now`). */
export const isCheckQuery = (query: string): boolean => query.endsWith(` ${CURRENT_FACT_WORD}`);

/** True for the text of a stale entry. */
export const isStaleFactText = (text: string): boolean => text.includes(STALE_FACT_MARK);

/** A fact with a stale entry: whose, which count, and the old value the stale entry states. */
export interface StaleFact {
  /** Position of the entity (its documents are `doc-<entityIndex>-<attribute>`). */
  entityIndex: number;
  attribute: Attribute;
  staleValue: number;
}

/**
 * Which facts have a stale entry, each with probability `decoyRate`, and its old value: another
 * value in [minValue, maxValue] than the current one, so that using it gives a wrong answer.
 */
export function drawStaleFacts(
  random: Random,
  entities: readonly WorldEntity[],
  settings: { decoyRate: number; minValue: number; maxValue: number },
): StaleFact[] {
  return entities.flatMap((entity, entityIndex) =>
    ATTRIBUTES.flatMap((attribute) => {
      if (!(random.next() < settings.decoyRate)) return [];
      const drawn = random.int(settings.minValue, settings.maxValue - 1);
      return [{ entityIndex, attribute, staleValue: drawn >= entity.facts[attribute] ? drawn + 1 : drawn }];
    }),
  );
}

/**
 * The world's corpus: one document per fact (`doc-<entity>-<attribute>`), the current entry in
 * place of the plain one where the fact is stale, then the stale entries (`...-old`). Without
 * stale facts, exactly the documents of `describeFact`.
 */
export function worldCorpus(entities: readonly WorldEntity[], stale: readonly StaleFact[]): TaskWorldDocument[] {
  const staleKeys = new Set(stale.map((fact) => `${fact.entityIndex}:${fact.attribute}`));
  return [
    ...entities.flatMap((entity, index) =>
      ATTRIBUTES.map((attribute) => ({
        id: `doc-${index}-${attribute}`,
        ...(staleKeys.has(`${index}:${attribute}`) ? describeCurrentFact(entity, attribute) : describeFact(entity, attribute)),
      })),
    ),
    ...stale.map((fact) => ({
      id: `doc-${fact.entityIndex}-${fact.attribute}-old`,
      ...describeStaleFact(entities[fact.entityIndex] as WorldEntity, fact.attribute, fact.staleValue),
    })),
  ];
}

import type { TaskWorldLevel } from './types';

/** The counted things every entity has, in document order. */
export const ATTRIBUTES = ['cats', 'dogs', 'hens'] as const;
export type Attribute = (typeof ATTRIBUTES)[number];

export interface WorldEntity {
  name: string;
  facts: Record<Attribute, number>;
}

/** One fact a question uses: whose, which count, and its value. */
export interface Operand {
  entity: string;
  attribute: Attribute;
  value: number;
}

/** What a template makes from its entities and attributes. */
export interface TemplateOutput {
  question: string;
  /** The facts the code uses, in the order it uses them. */
  operands: Operand[];
  /** The Python the expert runs: a bare expression, printed by the tool. */
  code: string;
  answer: number;
}

export interface TaskTemplate {
  id: string;
  level: TaskWorldLevel;
  /** Distinct entities the question names (one lookup each). */
  entities: number;
  /** Distinct attributes it uses. */
  attributes: 1 | 2;
  /** Undefined when these values do not fit (a difference must stay positive). */
  build(entities: readonly WorldEntity[], attributes: readonly Attribute[]): TemplateOutput | undefined;
}

const value = (entity: WorldEntity | undefined, attribute: Attribute | undefined) =>
  entity && attribute ? entity.facts[attribute] : Number.NaN;

const operand = (entity: WorldEntity | undefined, attribute: Attribute | undefined): Operand => ({
  entity: entity?.name ?? '',
  attribute: attribute ?? 'cats',
  value: value(entity, attribute),
});

/**
 * Question templates of graded difficulty. Questions stay under 80 characters and answers
 * are small non-negative integers; every question needs its lookups plus one python call.
 */
export const TEMPLATES: readonly TaskTemplate[] = [
  {
    id: 'sum1',
    level: 1,
    entities: 1,
    attributes: 2,
    build: ([x], [a, b]) => {
      const [p, q] = [value(x, a), value(x, b)];
      return { question: `How many ${a} and ${b} does ${x?.name} have?`, operands: [operand(x, a), operand(x, b)], code: `${p}+${q}`, answer: p + q };
    },
  },
  {
    id: 'diff1',
    level: 1,
    entities: 1,
    attributes: 2,
    build: ([x], [a, b]) => {
      const [p, q] = [value(x, a), value(x, b)];
      if (!(p > q)) return undefined;
      return { question: `How many more ${a} than ${b} does ${x?.name} have?`, operands: [operand(x, a), operand(x, b)], code: `${p}-${q}`, answer: p - q };
    },
  },
  {
    id: 'prod1',
    level: 1,
    entities: 1,
    attributes: 2,
    build: ([x], [a, b]) => {
      const [p, q] = [value(x, a), value(x, b)];
      return { question: `What is ${x?.name}'s ${a} times ${b}?`, operands: [operand(x, a), operand(x, b)], code: `${p}*${q}`, answer: p * q };
    },
  },
  {
    id: 'sum2',
    level: 2,
    entities: 2,
    attributes: 1,
    build: ([x, y], [a]) => {
      const [p, q] = [value(x, a), value(y, a)];
      return { question: `How many ${a} do ${x?.name} and ${y?.name} have?`, operands: [operand(x, a), operand(y, a)], code: `${p}+${q}`, answer: p + q };
    },
  },
  {
    id: 'diff2',
    level: 2,
    entities: 2,
    attributes: 1,
    build: ([x, y], [a]) => {
      const [p, q] = [value(x, a), value(y, a)];
      if (!(p > q)) return undefined;
      return { question: `How many more ${a} does ${x?.name} have than ${y?.name}?`, operands: [operand(x, a), operand(y, a)], code: `${p}-${q}`, answer: p - q };
    },
  },
  {
    id: 'prod2',
    level: 2,
    entities: 2,
    attributes: 2,
    build: ([x, y], [a, b]) => {
      const [p, q] = [value(x, a), value(y, b)];
      return { question: `What is ${x?.name}'s ${a} times ${y?.name}'s ${b}?`, operands: [operand(x, a), operand(y, b)], code: `${p}*${q}`, answer: p * q };
    },
  },
  {
    id: 'sum3',
    level: 3,
    entities: 3,
    attributes: 1,
    build: ([x, y, z], [a]) => {
      const values = [value(x, a), value(y, a), value(z, a)];
      return {
        question: `How many ${a} do ${x?.name}, ${y?.name} and ${z?.name} have?`,
        operands: [operand(x, a), operand(y, a), operand(z, a)],
        code: values.join('+'),
        answer: values.reduce((sum, item) => sum + item, 0),
      };
    },
  },
];

/**
 * The corpus entry of one fact, e.g. title `Riri cats`, text `Riri has 3 cats.`: one count
 * per document, so a lookup names the entity and the count it needs and the result holds
 * exactly one number.
 */
export function describeFact(entity: WorldEntity, attribute: Attribute): { title: string; text: string } {
  return { title: `${entity.name} ${attribute}`, text: `${entity.name} has ${entity.facts[attribute]} ${attribute}.` };
}

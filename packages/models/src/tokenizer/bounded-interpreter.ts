import { type Environment, Interpreter } from '@huggingface/jinja';

/**
 * What one rendering of a chat template may spend. A folder's template is code from whoever made
 * the folder: `{% for i in range(1000000000) %}` must end in an error, not take the process down.
 */
export interface ChatTemplateLimits {
  /**
   * Expressions and statements evaluated, each loop iteration counting {@link LOOP_ITERATION_STEPS}
   * (charged when the loop starts). Qwen3's template spends about 50 a message.
   */
  maxSteps: number;
  /** Characters of any string the template makes (the rendered chat included), or of a list or object printed as text. */
  maxChars: number;
  /** Items of any list the template makes, `range(n)` included (checked before it is made). */
  maxItems: number;
  /** Wall-clock time of one rendering. */
  maxMilliseconds: number;
}

/** Steps one loop iteration costs: the interpreter's bookkeeping of an iteration takes about two evaluations' time. */
export const LOOP_ITERATION_STEPS = 2;

type Node = NonNullable<Parameters<Interpreter['evaluate']>[0]>;
type Value = ReturnType<Interpreter['evaluate']>;
/** The AST fields read here (@huggingface/jinja exports no AST types). */
interface Syntax {
  type: string;
  value?: unknown;
  operand?: Syntax;
  filter?: Syntax;
  body?: Syntax[];
  callee?: Syntax;
  object?: Syntax;
  property?: Syntax;
  computed?: boolean;
  args?: Syntax[];
  iterable?: Syntax;
  lhs?: Syntax;
  assignee?: Syntax;
}
/** The interpreter's private steps that the checks below run the same way. */
interface Internals {
  applyFilter(operand: Value, filter: Node, environment: Environment): Value;
  evaluateBlock(statements: Node[], environment: Environment): Value;
}

/** A rendering ran past one of its {@link ChatTemplateLimits}. */
export class TemplateLimitError extends Error {}

function isList(value: Value): boolean {
  return value.type === 'ArrayValue' || value.type === 'TupleValue';
}

/**
 * What a value would take written out as JSON, which is how the template prints a list or an
 * object: a list of 60,000 references to one 4 Mi-character string is cheap to make and 240 Gi
 * characters to print, so values are sized by what they hold, not by what they cost.
 */
interface Extent {
  /** Characters of its JSON text without indentation (strings unescaped). */
  chars: number;
  /** Values in it, itself included. */
  nodes: number;
  /** Sum over the values in it of their depth below it: the indent units `tojson(indent=k)` adds. */
  padding: number;
  /** Whether it holds a namespace, the one value a template can change after making it. */
  mutable: boolean;
}

/** Children of a container, with the characters its own text adds (brackets, keys, separators). */
function partsOf(value: Value): { children: Value[]; ownChars: number } | undefined {
  if (isList(value)) {
    const items = value.value as Value[];
    return { children: items, ownChars: 2 + 2 * items.length };
  }
  if (value.type === 'ObjectValue' || value.type === 'NamespaceValue' || value.type === 'KeywordArgumentsValue') {
    const entries = value.value as Map<string, Value>;
    let ownChars = 2;
    for (const key of entries.keys()) ownChars += key.length + 6;
    return { children: [...entries.values()], ownChars };
  }
  return undefined;
}

function nameOf(filter: Syntax | undefined): string | undefined {
  const identifier = filter?.type === 'CallExpression' ? filter.callee : filter;
  return identifier?.type === 'Identifier' ? (identifier.value as string) : undefined;
}

/** Characters of `text.replace(old, replacement)` (every occurrence), counted without making it. */
function replacedLength(text: string, old: string, replacement: string, limit: number): number {
  if (replacement.length <= old.length) return text.length;
  let matches = 0;
  if (old.length === 0) matches = text.length + 1;
  else for (let index = text.indexOf(old); index >= 0 && matches * (replacement.length - old.length) <= limit; index = text.indexOf(old, index + old.length)) matches++;
  return text.length + matches * (replacement.length - old.length);
}

/**
 * The interpreter of @huggingface/jinja with every evaluation counted and sized: each value it
 * makes, and the output of `join`, `replace`, `indent` and `tojson` before it is made.
 */
export class BoundedInterpreter extends Interpreter {
  private steps = 0;
  private readonly deadline: number;
  /** The iterables of loops being entered: their length is charged once evaluated. */
  private readonly loopIterables = new Set<Syntax>();
  /** Extents of lists and objects that cannot change (nothing in them is a namespace). */
  private readonly extents = new WeakMap<object, Extent>();

  constructor(
    environment: Environment,
    private readonly limits: ChatTemplateLimits,
    private readonly now: () => number,
  ) {
    super(environment);
    this.deadline = now() + limits.maxMilliseconds;
  }

  private get internals(): Internals {
    return this as unknown as Internals;
  }

  private exceed(what: string): never {
    throw new TemplateLimitError(what);
  }

  private charge(steps: number): void {
    this.steps += steps;
    if (this.steps > this.limits.maxSteps) this.exceed(`ran past ${this.limits.maxSteps} steps (expressions and statements evaluated, ${LOOP_ITERATION_STEPS} a loop iteration)`);
    if ((steps > 1 || this.steps % 256 === 0) && this.now() > this.deadline) this.exceed(`ran past ${this.limits.maxMilliseconds} ms`);
  }

  override evaluate(statement: Parameters<Interpreter['evaluate']>[0], environment: Environment): Value {
    this.charge(1);
    const node = statement as Syntax | undefined;
    if (node?.type === 'For') {
      const iterable = node.iterable?.type === 'SelectExpression' ? node.iterable.lhs : node.iterable;
      if (iterable !== undefined) this.loopIterables.add(iterable);
    }
    let value: Value;
    if (node?.type === 'FilterExpression' || node?.type === 'FilterStatement') {
      // As the interpreter does, with the filter's output sized from its input before it is made.
      const operand =
        node.type === 'FilterExpression'
          ? this.evaluate(node.operand as unknown as Node, environment)
          : this.internals.evaluateBlock(node.body as unknown as Node[], environment);
      this.checkFilter(operand, node.filter as Syntax, environment);
      value = this.internals.applyFilter(operand, node.filter as unknown as Node, environment);
    } else {
      if (node?.type === 'CallExpression') this.checkMethodCall(node, environment);
      value = super.evaluate(statement, environment);
      // `{% set ns.name = value %}` changes the namespace in place: sized again.
      if (node?.type === 'SetStatement' && node.assignee?.type === 'MemberExpression') this.checkSize(this.evaluate(node.assignee.object as unknown as Node, environment));
    }
    this.checkSize(value);
    if (node !== undefined && this.loopIterables.delete(node)) {
      const length = isList(value) ? (value.value as unknown[]).length : value.type === 'ObjectValue' ? (value.value as Map<string, unknown>).size : 0;
      this.charge(LOOP_ITERATION_STEPS * length);
    }
    return value;
  }

  private checkSize(value: Value): void {
    if (value.type === 'StringValue' && (value.value as string).length > this.limits.maxChars) {
      this.exceed(`made a string of ${(value.value as string).length} characters, more than ${this.limits.maxChars}`);
    }
    if (isList(value) && (value.value as unknown[]).length > this.limits.maxItems) {
      this.exceed(`made a list of ${(value.value as unknown[]).length} items, more than ${this.limits.maxItems}`);
    }
    if (partsOf(value) !== undefined) {
      const { chars } = this.extentOf(value);
      if (chars > this.limits.maxChars) this.exceed(`made ${value.type === 'NamespaceValue' ? 'a namespace' : isList(value) ? 'a list' : 'an object'} of ${chars} characters as text, more than ${this.limits.maxChars}`);
    }
  }

  /** The extent of `value`, walking at most `maxItems` values not met before. */
  private extentOf(value: Value, visits = { left: this.limits.maxItems }): Extent {
    const parts = partsOf(value);
    if (parts === undefined) {
      const chars = value.type === 'StringValue' ? (value.value as string).length + 2 : 24;
      return { chars, nodes: 1, padding: 0, mutable: false };
    }
    const known = this.extents.get(value);
    if (known !== undefined) return known;
    visits.left -= parts.children.length;
    if (visits.left < 0) this.exceed(`made a value of more than ${this.limits.maxItems} parts`);
    const extent: Extent = { chars: parts.ownChars, nodes: 1, padding: 0, mutable: value.type === 'NamespaceValue' };
    for (const child of parts.children) {
      const inner = this.extentOf(child, visits);
      extent.chars += inner.chars;
      extent.nodes += inner.nodes;
      extent.padding += inner.padding + inner.nodes;
      extent.mutable ||= inner.mutable;
    }
    if (!extent.mutable) this.extents.set(value, extent);
    return extent;
  }

  /** The values of a call's arguments (evaluated again by the interpreter: they are expressions, without effects). */
  private argumentsOf(call: Syntax | undefined, environment: Environment): Value[] {
    if (call?.type !== 'CallExpression') return [];
    return (call.args ?? [])
      .filter((argument) => argument.type !== 'SpreadExpression' && argument.type !== 'KeywordSpreadExpression')
      .map((argument) => this.evaluate((argument.type === 'KeywordArgumentExpression' ? argument.value : argument) as unknown as Node, environment));
  }

  private checkResult(characters: number, what: string): void {
    if (characters > this.limits.maxChars) this.exceed(`${what} would make a string of ${characters} characters, more than ${this.limits.maxChars}`);
  }

  private checkFilter(operand: Value, filter: Syntax, environment: Environment): void {
    const name = nameOf(filter);
    if (name === 'tojson') {
      // Indented, every value in it starts a line indented by its depth.
      const indent = this.argumentsOf(filter, environment).find((argument) => argument.type === 'IntegerValue');
      const extent = this.extentOf(operand);
      this.checkResult(extent.chars + (indent === undefined ? 0 : extent.nodes + extent.padding * Math.max(0, indent.value as number)), 'tojson');
    } else if (name === 'indent' && operand.type === 'StringValue') {
      const [width] = this.argumentsOf(filter, environment);
      const text = operand.value as string;
      let lines = 1;
      for (let index = text.indexOf('\n'); index >= 0 && lines <= this.limits.maxChars; index = text.indexOf('\n', index + 1)) lines++;
      const perLine = width?.type === 'IntegerValue' ? (width.value as number) : width?.type === 'StringValue' ? (width.value as string).length : 4;
      this.checkResult(text.length + lines * perLine, 'indent');
    } else if (name === 'join') {
      const [separator] = this.argumentsOf(filter, environment);
      const items = operand.type === 'StringValue' ? (operand.value as string).length : isList(operand) ? (operand.value as Value[]).length : 0;
      let characters = Math.max(0, items - 1) * (separator?.type === 'StringValue' ? (separator.value as string).length : 0);
      if (isList(operand)) {
        for (const item of operand.value as Value[]) {
          // A string joins as itself; a list or an object inside as "[object Object]" per part.
          characters += typeof item.value === 'string' ? item.value.length : partsOf(item) === undefined ? 24 : 16 * this.extentOf(item).nodes;
          if (characters > this.limits.maxChars) break;
        }
      } else characters += items;
      this.checkResult(characters, 'join');
    } else if (name === 'replace') {
      this.checkReplace(operand, this.argumentsOf(filter, environment));
    }
  }

  /** `text.replace(old, new)` as a method: sized before the interpreter makes it. */
  private checkMethodCall(call: Syntax, environment: Environment): void {
    const callee = call.callee;
    if (callee?.type !== 'MemberExpression' || callee.computed || callee.property?.type !== 'Identifier' || callee.property.value !== 'replace') return;
    this.checkReplace(this.evaluate(callee.object as unknown as Node, environment), this.argumentsOf(call, environment));
  }

  private checkReplace(text: Value, [old, replacement]: Value[]): void {
    if (text.type !== 'StringValue' || old?.type !== 'StringValue' || replacement?.type !== 'StringValue') return;
    this.checkResult(replacedLength(text.value as string, old.value as string, replacement.value as string, this.limits.maxChars), 'replace');
  }
}

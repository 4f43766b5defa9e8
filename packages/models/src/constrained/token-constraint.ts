import { AgentFlowError } from '@agentflow/core';
import {
  completionCost,
  initialStack,
  isComplete,
  isPlainStringToken,
  plainStringCostChange,
  type Stack,
  stackKey,
  step,
} from './json-automaton';
import { utf8CharacterCount } from './json-frames';
import { compileJsonSchema, type SchemaNode } from './schema-node';
import { buildTokenTrie, type TokenTrie } from './token-trie';

/** The automaton's position: every stack still possible (a union may keep several). Interned. */
export interface ConstraintState {
  readonly key: string;
  readonly stacks: readonly (Stack | null)[];
  /** Bytes of the shortest completion. */
  readonly cost: number;
  readonly complete: boolean;
}

/** Says which tokens may come next so that the output stays a prefix of a valid value. */
export interface TokenConstraint {
  readonly initial: ConstraintState;
  /**
   * Allowed token ids when `remainingTokens` tokens may still be emitted (this one included):
   * only tokens after which the value can still be completed, and EOS, in time (within
   * {@link tokensToComplete} tokens). EOS ids are allowed exactly when the value is complete.
   */
  allowedTokens(state: ConstraintState, remainingTokens: number): number[];
  /**
   * Tokens that complete the value from `state` (EOS not counted): the length of a path through
   * the vocabulary the constraint has found, so an upper bound of the fewest, and at most
   * `state.cost` (a token per byte).
   */
  tokensToComplete(state: ConstraintState): number;
  /** The state after `tokenId`; throws when the token is not allowed. */
  advance(state: ConstraintState, tokenId: number): ConstraintState;
  isComplete(state: ConstraintState): boolean;
}

/** The vocabulary side of constrained decoding, shared by every schema. */
export interface ConstraintVocabulary {
  /** Bytes of each token id; undefined for special tokens. */
  tokenBytes: readonly (Uint8Array | undefined)[];
  eosTokenIds: readonly number[];
}

interface InternalState extends ConstraintState {
  /** Next state by byte: undefined = not computed yet, null = byte rejected. */
  transitions: (InternalState | null | undefined)[];
  /** Viable tokens and the cost to complete after each, filled on first use. */
  tokens?: Int32Array;
  costs?: Int32Array;
  maxCost?: number;
  /** Every viable token (and EOS when complete), for steps where the budget excludes none. */
  everything?: number[];
  /** See {@link TokenConstraint.tokensToComplete}; filled on first use. */
  tokensToComplete?: number;
  /** Tokens to complete after each of `tokens`, and their maximum, filled when a budget is below `maxCost`. */
  tokenCosts?: Int32Array;
  maxTokenCost?: number;
}

/** The vocabulary split for the string-body shortcut. */
interface VocabularyIndex {
  /** Every token with bytes. */
  full: TokenTrie;
  /** Tokens that are not plain string content. */
  special: TokenTrie;
  plain: Int32Array;
  /** Characters of each plain token. */
  plainCharacters: Int32Array;
}

/**
 * Creates a factory of JSON-schema constraints over one vocabulary. The byte trie is built once;
 * automaton states are interned with a memo of their byte transitions, and each state's viable
 * tokens are found by one walk of the trie (pruned at the first rejected byte), then cached. A
 * 150k-token vocabulary thus costs one walk per new state and a filter per step.
 */
export function createJsonSchemaConstraints(vocabulary: ConstraintVocabulary): (schema: Record<string, unknown>) => TokenConstraint {
  let index: VocabularyIndex | undefined;
  const bySchema = new Map<string, TokenConstraint>();
  return (schema) => {
    const schemaKey = JSON.stringify(schema);
    const existing = bySchema.get(schemaKey);
    if (existing) return existing;
    if (!index) {
      const plain: number[] = [];
      const plainCharacters: number[] = [];
      const special = vocabulary.tokenBytes.map((bytes, tokenId) => {
        if (bytes && isPlainStringToken(bytes)) {
          plain.push(tokenId);
          plainCharacters.push(utf8CharacterCount(bytes));
          return undefined;
        }
        return bytes;
      });
      index = {
        full: buildTokenTrie(vocabulary.tokenBytes),
        special: buildTokenTrie(special),
        plain: Int32Array.from(plain),
        plainCharacters: Int32Array.from(plainCharacters),
      };
    }
    const constraint = createConstraint(compileJsonSchema(schema), vocabulary, index);
    bySchema.set(schemaKey, constraint);
    return constraint;
  };
}

function createConstraint(root: SchemaNode, vocabulary: ConstraintVocabulary, index: VocabularyIndex): TokenConstraint {
  const states = new Map<string, InternalState>();
  const intern = (stacks: (Stack | null)[]): InternalState => {
    const unique = new Map<string, Stack | null>();
    for (const stack of stacks) unique.set(stackKey(stack), stack);
    const keys = [...unique.keys()].sort();
    const key = keys.join('\n');
    let state = states.get(key);
    if (!state) {
      const kept = keys.map((name) => unique.get(name)!);
      state = {
        key,
        stacks: kept,
        cost: Math.min(...kept.map(completionCost)),
        complete: kept.some(isComplete),
        transitions: [],
      };
      states.set(key, state);
    }
    return state;
  };
  const next = (state: InternalState, byte: number): InternalState | null => {
    let target = state.transitions[byte];
    if (target === undefined) {
      const stacks: (Stack | null)[] = [];
      for (const stack of state.stacks) for (const following of step(stack, byte)) stacks.push(following);
      target = stacks.length === 0 ? null : intern(stacks);
      state.transitions[byte] = target;
    }
    return target;
  };
  const viable = (state: InternalState): { tokens: Int32Array; costs: Int32Array } => {
    if (state.tokens && state.costs) return { tokens: state.tokens, costs: state.costs };
    // Inside string content a plain token only moves the character count: price every plain token
    // from its length and walk only the others. Without this, each position of a string with
    // maxLength would walk the whole 150k-token trie (about 150 ms per state for Qwen3's).
    const costChange = state.stacks.length === 1 ? plainStringCostChange(state.stacks[0]!) : undefined;
    const plainTokens = new Int32Array(costChange ? index.plain.length : 0);
    const plainCosts = new Int32Array(plainTokens.length);
    let plainCount = 0;
    if (costChange) {
      const changeByLength = new Map<number, number | undefined>();
      for (let position = 0; position < index.plain.length; position++) {
        const characters = index.plainCharacters[position]!;
        let change = changeByLength.get(characters);
        if (!changeByLength.has(characters)) {
          change = costChange(characters);
          changeByLength.set(characters, change);
        }
        if (change === undefined) continue;
        plainTokens[plainCount] = index.plain[position]!;
        plainCosts[plainCount] = state.cost + change;
        plainCount++;
      }
    }
    const tokens: number[] = [];
    const costs: number[] = [];
    const { edgeStart, edgeByte, edgeChild, tokensAt } = costChange ? index.special : index.full;
    const walk = (node: number, current: InternalState) => {
      const ending = tokensAt.get(node);
      if (ending) {
        for (const token of ending) {
          tokens.push(token);
          costs.push(current.cost);
        }
      }
      for (let edge = edgeStart[node]!; edge < edgeStart[node + 1]!; edge++) {
        const following = next(current, edgeByte[edge]!);
        if (following) walk(edgeChild[edge]!, following);
      }
    };
    walk(0, state);
    state.tokens = new Int32Array(plainCount + tokens.length);
    state.tokens.set(plainTokens.subarray(0, plainCount));
    state.tokens.set(tokens, plainCount);
    state.costs = new Int32Array(plainCount + costs.length);
    state.costs.set(plainCosts.subarray(0, plainCount));
    state.costs.set(costs, plainCount);
    state.maxCost = state.costs.reduce((max, cost) => Math.max(max, cost), 0);
    state.everything = [...state.tokens, ...(state.complete ? vocabulary.eosTokenIds : [])];
    return { tokens: state.tokens, costs: state.costs };
  };
  const internal = (state: ConstraintState) => state as InternalState;
  const after = (state: InternalState, tokenId: number): InternalState | null => {
    const bytes = vocabulary.tokenBytes[tokenId];
    let current: InternalState | null = bytes ? state : null;
    if (bytes) for (const byte of bytes) current = current ? next(current, byte) : null;
    return current;
  };
  // A budget counts tokens, and a state's byte cost only bounds them (a token per byte): a merged
  // token such as `","action":"finish","action_input":"` writes 38 bytes at once. So each state
  // also gets the length of one path to completion through the vocabulary, found greedily (the
  // viable token after which the fewest bytes remain, repeated); it is never above the byte cost.
  const tokensToComplete = (state: InternalState): number => {
    const chain: InternalState[] = [];
    let current = state;
    let known: number;
    for (;;) {
      if (current.tokensToComplete !== undefined) {
        known = current.tokensToComplete;
        break;
      }
      if (current.complete) {
        known = current.tokensToComplete = 0;
        break;
      }
      const { tokens, costs } = viable(current);
      let best = -1;
      for (let index = 0; index < tokens.length; index++) if (best < 0 || costs[index]! < costs[best]!) best = index;
      const following = best < 0 || costs[best]! >= current.cost ? null : after(current, tokens[best]!);
      if (!following) {
        known = current.tokensToComplete = current.cost; // no progress found: the byte bound
        break;
      }
      chain.push(current);
      current = following;
    }
    for (let index = chain.length - 1; index >= 0; index--) {
      known = Math.min(chain[index]!.cost, known + 1);
      chain[index]!.tokensToComplete = known;
    }
    return state.tokensToComplete!;
  };
  const tokenCosts = (state: InternalState): Int32Array => {
    if (state.tokenCosts) return state.tokenCosts;
    const { tokens } = viable(state);
    const result = new Int32Array(tokens.length);
    for (let index = 0; index < tokens.length; index++) result[index] = tokensToComplete(after(state, tokens[index]!)!);
    state.tokenCosts = result;
    state.maxTokenCost = result.reduce((max, cost) => Math.max(max, cost), 0);
    return result;
  };

  return {
    initial: intern([initialStack(root)]),
    allowedTokens(state, remainingTokens) {
      const current = internal(state);
      const { tokens } = viable(current);
      // After this token, remainingTokens - 1 are left: enough to finish, plus EOS.
      const limit = remainingTokens - 2;
      const { maxCost, everything } = current;
      if (maxCost !== undefined && everything && maxCost <= limit && everything.length > 0) return everything;
      // The byte costs (a token per byte) do not settle this budget: count each token's path in tokens.
      const needed = tokenCosts(current);
      if (current.maxTokenCost! <= limit && everything && everything.length > 0) return everything;
      const allowed: number[] = [];
      for (let index = 0; index < tokens.length; index++) if (needed[index]! <= limit) allowed.push(tokens[index]!);
      if (state.complete) allowed.push(...vocabulary.eosTokenIds);
      if (allowed.length === 0) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `Constrained decoding cannot complete the JSON value within the remaining ${remainingTokens} tokens; raise maxTokens (the shortest ending found needs ${tokensToComplete(current) + 1} tokens here, EOS included).`,
          details: { remainingTokens },
        });
      }
      return allowed;
    },
    tokensToComplete: (state) => tokensToComplete(internal(state)),
    advance(state, tokenId) {
      const bytes = vocabulary.tokenBytes[tokenId];
      const current = after(internal(state), tokenId);
      if (!bytes || !current) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `Token ${tokenId} is not allowed by the JSON schema at this point.`,
          details: { tokenId },
        });
      }
      return current;
    },
    isComplete: (state) => state.complete,
  };
}

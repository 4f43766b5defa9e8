import { describe, expect, it } from 'vitest';
import { applyOverrides, collectOverrides, parseOverride } from './overrides';
import { thrownAgentFlowError } from './thrown-error.test-helper';

const failure = thrownAgentFlowError;

describe('parseOverride', () => {
  it.each([
    ['train.totalSteps=2', ['train', 'totalSteps'], 2],
    ['train.lora=true', ['train', 'lora'], true],
    ['task.train.years=[1983, 1990]', ['task', 'train', 'years'], [1983, 1990]],
    ['policy.model={a: 1}', ['policy', 'model'], { a: 1 }],
    ['out=null', ['out'], null],
    ['policy.model.path=models/x', ['policy', 'model', 'path'], 'models/x'],
    ['name="2"', ['name'], '2'],
    ['lr=1e-3', ['lr'], 0.001],
    ['name=', ['name'], ''],
    ['url=http://h/?a=1&b=2', ['url'], 'http://h/?a=1&b=2'],
  ])('parses %s as YAML', (text, path, value) => {
    expect(parseOverride(text)).toEqual({ path, value });
  });

  it.each(['foo', '=2', ' =2', ''])('rejects %j without a key', (text) => {
    const error = failure(() => parseOverride(text));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toBe(`--set ${JSON.stringify(text)}: expected KEY.PATH=VALUE, e.g. --set train.totalSteps=2`);
  });

  it.each(['a..b=1', '.a=1', 'a.=1'])('rejects the empty segment in %j', (text) => {
    const error = failure(() => parseOverride(text));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('empty segment');
    expect(error.message).toContain(JSON.stringify(text));
  });

  it('rejects a value that is not YAML, saying how to pass a string', () => {
    const error = failure(() => parseOverride('name=[1,'));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('not valid YAML');
    expect(error.message).toContain(`--set 'name="[1,"'`);
  });
});

describe('applyOverrides', () => {
  it('sets deep keys, creating the objects on the way, without touching the input', () => {
    const raw = { seed: 1, policy: { temperature: 1, model: { preset: 'tiny' } } };
    const snapshot = structuredClone(raw);
    const merged = applyOverrides(raw, ['policy.temperature=0.5', 'train.steps=2', 'task.train.years=[1983, 1990]']);
    expect(merged).toEqual({
      seed: 1,
      policy: { temperature: 0.5, model: { preset: 'tiny' } },
      train: { steps: 2 },
      task: { train: { years: [1983, 1990] } },
    });
    expect(raw).toEqual(snapshot);
  });

  it('starts from {} for an empty config and replaces null objects', () => {
    expect(applyOverrides(undefined, ['seed=3'])).toEqual({ seed: 3 });
    expect(applyOverrides(null, ['seed=3'])).toEqual({ seed: 3 });
    expect(applyOverrides({ train: { lora: null } }, ['train.lora.rank=8'])).toEqual({ train: { lora: { rank: 8 } } });
  });

  it('lets a later override win, and an object value replace what was there', () => {
    expect(applyOverrides({}, ['seed=1', 'seed=2'])).toEqual({ seed: 2 });
    expect(applyOverrides({ train: { steps: 3, groupSize: 8 } }, ['train={steps: 1}'])).toEqual({ train: { steps: 1 } });
    expect(applyOverrides({}, ['train={steps: 1}', 'train.groupSize=4'])).toEqual({ train: { steps: 1, groupSize: 4 } });
  });

  it('indexes into an existing list without mutating it', () => {
    const raw = { task: { levels: [1, 2] } };
    expect(applyOverrides(raw, ['task.levels.1=3'])).toEqual({ task: { levels: [1, 3] } });
    expect(raw.task.levels).toEqual([1, 2]);
    const error = failure(() => applyOverrides(raw, ['task.levels.2=3']));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('task.levels is [1,2], a list of 2');
  });

  it('refuses a path into a non-object, naming the key', () => {
    const error = failure(() => applyOverrides({ seed: 0 }, ['seed.x=1']));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toBe('--set "seed.x=1": cannot set seed.x: seed is 0, not an object.');
  });

  it('keeps __proto__ an own key instead of reaching the prototype', () => {
    const merged = applyOverrides({}, ['__proto__.polluted=1']) as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
  });
});

describe('applyOverrides over the default', () => {
  const defaults = { task: { kind: 'world', trainTasks: 800, planner: { layers: 2 } }, label: { kind: 'monte-carlo', samples: 4 }, policy: { model: { preset: 'tiny' } } };

  it("starts a block the config leaves out at the default's kind", () => {
    expect(applyOverrides({}, ['task.trainTasks=100', 'label.samples=2'], { defaults })).toEqual({
      task: { kind: 'world', trainTasks: 100 },
      label: { kind: 'monte-carlo', samples: 2 },
    });
    expect(applyOverrides({}, ['task.planner.layers=3'], { defaults })).toEqual({ task: { kind: 'world', planner: { layers: 3 } } });
  });

  it('leaves a block without a kind, and a block the config has, as they are', () => {
    expect(applyOverrides({}, ['policy.model.path=models/x'], { defaults })).toEqual({ policy: { model: { path: 'models/x' } } });
    const file = { task: { kind: 'datasets', train: { path: 'a.jsonl' } } };
    expect(applyOverrides(file, ['task.train.limit=5', 'task.planner.layers=3'], { defaults })).toEqual({
      task: { kind: 'datasets', train: { path: 'a.jsonl', limit: 5 }, planner: { layers: 3 } },
    });
  });

  it("restarts a block whose kind a --set changes, keeping that command line's earlier keys inside it", () => {
    const file = { label: { kind: 'monte-carlo', samples: 4, maxTrajectories: 10 } };
    expect(applyOverrides(file, ['label.kind=judge'], { defaults })).toEqual({ label: { kind: 'judge' } });
    expect(applyOverrides(file, ['label.endpoint.model=m', 'label.kind=judge', 'label.concurrency=2'], { defaults })).toEqual({
      label: { kind: 'judge', endpoint: { model: 'm' }, concurrency: 2 },
    });
    // A key set directly in the block before its kind is kept too (train.trainable.frozen=[...] then .kind=full).
    expect(applyOverrides({}, ['label.concurrency=2', 'label.kind=judge'], { defaults })).toEqual({ label: { kind: 'judge', concurrency: 2 } });
    // The same kind again keeps the block.
    expect(applyOverrides(file, ['label.kind=monte-carlo'], { defaults })).toEqual(file);
    expect(applyOverrides({}, ['task.kind=datasets', 'task.train.path=a.jsonl'], { defaults })).toEqual({ task: { kind: 'datasets', train: { path: 'a.jsonl' } } });
  });
});

describe('collectOverrides', () => {
  it('collects repeated --set values in order, as commander calls it', () => {
    expect(collectOverrides('b=2', collectOverrides('a=1', undefined))).toEqual(['a=1', 'b=2']);
  });
});

import ort from 'onnxruntime-node';
import { allocateTypedArray, type HostTensor } from '../dtype/dtype';
import type { GraphBuilder } from '../graph/graph-types';
import { buildSharedWeightsModel, GRAPH_SELECTOR_INPUT, type SharedWeightsModel } from '../graph/shared-weights-model';

type OrtSession = Awaited<ReturnType<typeof ort.InferenceSession.create>>;
type OrtTensors = Record<string, InstanceType<typeof ort.Tensor>>;

/** Opens an ONNX Runtime session over a shared-weights model (the runtime's `open`, bound to a device). */
export type OpenSharedModel = (model: SharedWeightsModel, weights: ReadonlyMap<string, HostTensor>, name: string) => Promise<OrtSession>;

/** One copy of a set of weights, and the sessions that read it (TensorRuntime.sharedWeightCopies). */
export interface SharedWeightCopy {
  sessions: string[];
  bytes: number;
}

/** One graph's view of a shared session: what a TensorSession runs on. */
export interface SharedGraphCore {
  inputNames: readonly string[];
  outputNames: readonly string[];
  execute(feeds: OrtTensors, fetches: readonly string[]): Promise<OrtTensors>;
  release(): Promise<void>;
}

interface BuiltSession {
  session: OrtSession;
  model: SharedWeightsModel;
  /** Per graph: placeholders for the inputs only other graphs read, and the selector. */
  fixedFeeds: OrtTensors[];
}

interface Group {
  graphs: GraphBuilder[];
  names: string[];
  /** Every weight of the group's graphs by name (the same name is the same array in all of them). */
  weights: Map<string, HostTensor>;
  current: Promise<BuiltSession>;
  inFlight: Set<Promise<unknown>>;
  /** Graphs opened and not yet released. */
  open: number;
}

/**
 * Feeds for graph `index` of `model` beyond its own: each input that only other graphs read gets
 * an empty tensor (a symbolic dimension set to 0) or, with every dimension fixed, zeros of that
 * shape; and the selector gets `index` (where the graphs are branches).
 */
function fixedFeedsOf(model: SharedWeightsModel, index: number): OrtTensors {
  const own = new Set(model.graphs[index]!.inputs);
  const feeds: OrtTensors = model.branches ? { [GRAPH_SELECTOR_INPUT]: new ort.Tensor('int64', BigInt64Array.of(BigInt(index)), []) } : {};
  for (const input of model.inputs) {
    if (own.has(input.name)) continue;
    const dims = input.dims.map((dim) => dim ?? 0);
    const data = allocateTypedArray(input.dtype, dims.reduce((product, dim) => product * dim, 1));
    feeds[input.name] = new ort.Tensor(input.dtype as 'float32', data as Float32Array, dims);
  }
  return feeds;
}

/**
 * Serves every graph over the same weight arrays from one ONNX Runtime session, so the weights
 * are held once (see RuntimeSettings.weightPlacement 'shared'). A graph whose weights share an
 * array with an open group joins it: the group's session is released (after its runs in flight
 * end) and rebuilt with every graph so far, so the peak stays one copy. Runs of the group's
 * graphs wait for the rebuild. The session is released when every graph of the group is.
 */
export function createSharedWeightsSessions(openModel: OpenSharedModel) {
  const groups: Group[] = [];

  const build = async (group: Group, name: string, previous: Promise<BuiltSession> | undefined): Promise<BuiltSession> => {
    const old = await previous?.catch(() => undefined);
    if (old) {
      await Promise.allSettled([...group.inFlight]);
      await old.session.release();
    }
    const model = buildSharedWeightsModel(group.graphs);
    const session = await openModel(model, group.weights, group.graphs.length === 1 ? name : `${name} (weights shared by ${group.graphs.length} graphs)`);
    return { session, model, fixedFeeds: model.graphs.map((_, index) => fixedFeedsOf(model, index)) };
  };

  /** Starts the group's next session; its failure reaches the runs that await it, never an unhandled rejection. */
  const rebuild = (group: Group, name: string, previous: Promise<BuiltSession> | undefined) => {
    group.current = build(group, name, previous);
    group.current.catch(() => undefined);
  };

  return {
    /** The weight copies held now: per group, its graphs' session names and the weights' bytes. */
    copies: (): SharedWeightCopy[] =>
      groups.map((group) => ({ sessions: [...group.names], bytes: [...group.weights.values()].reduce((sum, value) => sum + value.data.byteLength, 0) })),
    /** Adds `graph` to the group of its weights (a new group when none shares an array) and returns its view. */
    async join(graph: GraphBuilder, name: string): Promise<SharedGraphCore> {
      const weights = graph.weights();
      // A group whose arrays this graph reads, and which binds none of its weight names to another array.
      let group = groups.find((candidate) => {
        const arrays = new Set([...candidate.weights.values()].map((value) => value.data));
        return [...weights.values()].some((value) => arrays.has(value.data)) && [...weights].every(([weight, value]) => (candidate.weights.get(weight)?.data ?? value.data) === value.data);
      });
      const previous = group?.current;
      if (group === undefined) {
        group = { graphs: [], names: [], weights: new Map(), current: Promise.resolve(undefined as never), inFlight: new Set(), open: 0 };
        groups.push(group);
      }
      const member = group;
      const index = member.graphs.length;
      member.graphs.push(graph);
      member.names.push(name);
      for (const [weight, value] of weights) member.weights.set(weight, value);
      member.open += 1;
      rebuild(member, name, previous);
      let built: BuiltSession;
      try {
        built = await member.current;
      } catch (error) {
        // The group cannot hold this graph (or its session failed): rebuild it without the graph.
        member.graphs.splice(index, 1);
        member.names.splice(index, 1);
        member.open -= 1;
        member.weights = new Map(member.graphs.flatMap((other) => [...other.weights()]));
        if (member.graphs.length === 0) groups.splice(groups.indexOf(member), 1);
        else rebuild(member, member.names[0]!, member.current);
        throw error;
      }
      const described = built.model.graphs[index]!;
      let released = false;
      return {
        inputNames: described.inputs,
        outputNames: described.outputs,
        async execute(feeds, fetches) {
          const state = await member.current;
          const { outputs, modelOutputs } = state.model.graphs[index]!;
          const names = fetches.map((fetch) => modelOutputs[outputs.indexOf(fetch)]!);
          const run = state.session.run({ ...state.fixedFeeds[index], ...feeds }, names);
          member.inFlight.add(run);
          try {
            const results = (await run) as OrtTensors;
            return Object.fromEntries(fetches.map((fetch, position) => [fetch, results[names[position]!]!]));
          } finally {
            member.inFlight.delete(run);
          }
        },
        async release() {
          if (released) return;
          released = true;
          member.open -= 1;
          if (member.open > 0) return;
          groups.splice(groups.indexOf(member), 1);
          const state = await member.current;
          await Promise.allSettled([...member.inFlight]);
          await state.session.release();
        },
      };
    },
  };
}

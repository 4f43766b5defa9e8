import { AgentFlowError } from '@agentflow/core';
import { findNearDuplicates, loadBenchmark } from '@agentflow/eval';
import type { RegisterCommand } from './command-context';
import { parseNumber } from './option-values';

interface DedupOptions {
  train: string;
  test: string;
  json?: boolean;
  failOnLeak?: boolean;
  threshold: string;
}

/**
 * `agentflow dedup --train FILE --test FILE [--json] [--fail-on-leak] [--threshold X]`:
 * lists the (train, test) pairs that look like the same problem after normalisation.
 */
export const registerDedupCommand: RegisterCommand = (program, context) => {
  program
    .command('dedup')
    .description('Find test items that leak into the training data (near-duplicate problems).')
    .requiredOption('--train <file>', 'training data: .csv (id, problem, answer), .json (AgentFlow benchmark) or .jsonl')
    .requiredOption('--test <file>', 'test data, same formats')
    .option('--json', 'print {"pairs": [{"train_id", "test_id", "score"}]}')
    .option('--fail-on-leak', 'exit with status 1 when any pair is found')
    .option('--threshold <score>', 'similarity in [0, 1] that counts as a leak', '0.5')
    .action((options: DedupOptions) => {
      const threshold = parseNumber('--threshold', options.threshold, 0, 1);
      const train = loadBenchmark(options.train);
      const test = loadBenchmark(options.test);
      const pairs = findNearDuplicates(train, test, { threshold });
      if (options.json) {
        context.stdout(`${JSON.stringify({ pairs: pairs.map(({ train_id, test_id, score }) => ({ train_id, test_id, score })) })}\n`);
      } else {
        const lines = [`${pairs.length} suspected pair(s) between ${options.train} (${train.length} items) and ${options.test} (${test.length} items), threshold ${threshold}:`];
        for (const pair of pairs) lines.push(`  ${pair.score.toFixed(3)}  train ${pair.train_id}  ~  test ${pair.test_id}`);
        if (pairs.length === 0) lines.push('  none');
        context.stdout(`${lines.join('\n')}\n`);
      }
      if (options.failOnLeak && pairs.length > 0) {
        throw new AgentFlowError({
          code: 'DATA_LEAKAGE',
          message: `${pairs.length} test item(s) leak into the training data (--fail-on-leak).`,
          details: { pairs: pairs.length },
        });
      }
    });
};

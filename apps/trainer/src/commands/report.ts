import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { isEvalDirectory, rewriteEvalPage } from '@agentflow/eval';
import { writeRunReport } from '../report/write-run-report';
import type { RegisterCommand } from './command-context';

export const registerReportCommand: RegisterCommand = (program, context) => {
  program
    .command('report')
    .description('Write report.html for one run, draw several runs on the same axes (--compare), or write eval.html again for an eval directory.')
    .argument('[run]', 'a run directory, or an eval directory (agentflow eval --out DIR)')
    .option('--compare <runs...>', 'run directories to compare, e.g. a process-credit and an outcome-credit run')
    .option('--out <file>', 'where to write the page (default: RUN/report.html, or compare.html)')
    .action((run: string | undefined, options: { compare?: string[]; out?: string }) => {
      if (run && !options.compare && !options.out && isEvalDirectory(run)) return context.stdout(`Wrote ${rewriteEvalPage(run)}\n`);
      const dirs = options.compare ?? (run ? [run] : []);
      if (dirs.length === 0) {
        throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'report needs a run directory, or --compare RUN_A RUN_B.' });
      }
      const out = options.out ?? (dirs.length === 1 ? join(dirs[0] as string, 'report.html') : 'compare.html');
      writeRunReport(dirs, out);
      context.stdout(`Wrote ${out}\n`);
    });
};

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, openRunDirectory } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { runConfigSchema } from '../config/schema';
import { writeVaultServer } from '../testing/vault-mcp-server.test-helper';
import { createPipelineContext } from './pipeline-context';

const world = { kind: 'world', trainTasks: 12, testTasks: 4 } as const;
const newRun = () => openRunDirectory(join(mkdtempSync(join(tmpdir(), 'agentflow-tools-')), 'run'));

describe("a run config's tools block", () => {
  it("adds an MCP server's tools beside the task source's, callable, and the run's dispose closes it", async () => {
    const script = writeVaultServer(mkdtempSync(join(tmpdir(), 'agentflow-vault-')));
    const config = runConfigSchema.parse({ task: world, tools: { mcp: [`vault='${process.execPath}' '${script}'`] } });
    const context = await createPipelineContext(config, newRun(), () => {});
    const names = context.tools.tools.map((tool) => tool.name);
    expect(names.slice(0, 2)).toEqual(['corpus_search', 'python']);
    expect(names).toContain('vault__secret_number');
    const secret = context.tools.tools.find((tool) => tool.name === 'vault__secret_number')!;
    const result = await secret.execute({}, { signal: new AbortController().signal, taskId: 'train-0' });
    expect(result.output).toContain('7331');
    await context.tools.dispose();
  });

  it('refuses web search without its key, naming the variable, before anything starts', async () => {
    const config = runConfigSchema.parse({ task: world, tools: { webSearch: { apiKeyEnv: 'AGENTFLOW_TEST_UNSET_KEY' } } });
    const error = await createPipelineContext(config, newRun(), () => {}).catch((caught: unknown) => caught);
    expect(AgentFlowError.isInstance(error) && error.code).toBe('INVALID_CONFIG');
    expect((error as Error).message).toContain('AGENTFLOW_TEST_UNSET_KEY');
  });

  it('refuses an MCP entry a shell would read differently, naming the character', () => {
    const config = runConfigSchema.parse({ task: world, tools: { mcp: ['node server.js | tee log'] } });
    return expect(createPipelineContext(config, newRun(), () => {})).rejects.toThrow(/\|/);
  });

});

import { describe, expect, it } from 'vitest';
import { createConfiguredToolSet, toolsConfigSchema } from './tools-config';

describe("a run config's tools block", () => {
  it('is off by default and builds web search and Wikipedia tools from the block', async () => {
    expect(toolsConfigSchema.parse(undefined)).toEqual({ webSearch: null, wikipedia: null, mcp: [] });
    const config = toolsConfigSchema.parse({ webSearch: { apiKeyEnv: 'MY_KEY' }, wikipedia: {} });
    const set = await createConfiguredToolSet(config, { env: { MY_KEY: 'k' }, warn: () => {} });
    try {
      expect(set.tools.map((tool) => tool.name)).toEqual(['web_search', 'wikipedia']);
    } finally {
      await set.close();
    }
  });

  it('refuses an unset key variable and a name the task source already offers, naming the keys under the prefix', async () => {
    const config = toolsConfigSchema.parse({ webSearch: { apiKeyEnv: 'UNSET_KEY' } });
    await expect(createConfiguredToolSet(config, { env: {}, prefix: 'agent.tools' })).rejects.toThrow(
      'agent.tools.webSearch: the environment variable UNSET_KEY (apiKeyEnv) is not set; export the Tavily API key there, or set agent.tools.webSearch: null.',
    );
    const wikipedia = toolsConfigSchema.parse({ wikipedia: {} });
    const taken = { label: "the task source's tools", remedy: 'leave it out', tools: [{ name: 'wikipedia' } as never] };
    await expect(createConfiguredToolSet(wikipedia, { alongside: [taken], warn: () => {} })).rejects.toThrow(/wikipedia/);
    expect(() => toolsConfigSchema.parse({ mcp: [''] })).toThrow();
  });
});

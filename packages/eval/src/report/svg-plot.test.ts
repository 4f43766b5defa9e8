import { describe, expect, it } from 'vitest';
import { escapeXml, renderSvgPlot } from './svg-plot';

const settings = { title: 'Accuracy <per> step', xLabel: 'step', yLabel: 'accuracy' };

describe('renderSvgPlot', () => {
  it('draws each series as a path with its band and a legend, escaping the text', () => {
    const svg = renderSvgPlot(
      [
        { label: 'process & co', points: [[0, 0.1], [1, 0.5], [2, Number.NaN]], band: [[0, 0, 0.2], [1, 0.4, 0.6]] },
        { label: 'outcome', points: [[0, 0.2], [1, 0.3]] },
      ],
      { ...settings, yRange: [0, 1] },
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="520" height="300" viewBox="0 0 520 300" role="img" aria-label="Accuracy &lt;per&gt; step">')).toBe(true);
    // The plot area is x 56-504, y 28-256 (margins 56, 16, 28, 44): y = 256 - 228 * accuracy.
    expect(svg.match(/<path d="M[^"]+"/g)).toEqual(['<path d="M56.0,233.2L504.0,142.0"', '<path d="M56.0,210.4L504.0,187.6"']);
    expect(svg.match(/<polygon /g)).toHaveLength(1);
    expect(svg).toContain('>process &amp; co</text>');
    expect(svg).not.toContain('<script');
    expect(svg.endsWith('</svg>')).toBe(true);
  });

  it('draws markers for a scatter plot or a single point, the diagonal on request, and says when there is no data', () => {
    const scatter = renderSvgPlot([{ label: 'bins', points: [[0.1, 0.2], [0.9, 0.8]] }], { ...settings, scatter: true, diagonal: true, xRange: [0, 1], yRange: [0, 1] });
    expect(scatter.match(/<circle /g)).toHaveLength(2);
    expect(scatter).toContain('stroke-dasharray="4 3"');
    expect(renderSvgPlot([{ label: 'one', points: [[3, 0.5]] }], settings).match(/<circle /g)).toHaveLength(1);
    expect(renderSvgPlot([{ label: 'none', points: [[0, Number.NaN]] }], settings)).toContain('>no data recorded</text></svg>');
  });

  it('escapes the characters XML reserves', () => {
    expect(escapeXml(`a < b && c > "d"`)).toBe('a &lt; b &amp;&amp; c &gt; &quot;d&quot;');
  });
});

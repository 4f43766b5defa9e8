/** One line of a plot: its label and its (x, y) points. */
export interface PlotSeries {
  label: string;
  points: Array<[number, number]>;
  /** A shaded interval around the line: (x, low, high), e.g. a 95% band over seeds. */
  band?: Array<[number, number, number]>;
}

/** What {@link renderSvgPlot} draws around the series: titles, size and ranges. */
export interface PlotSettings {
  /** Above the plot, and the SVG's accessible label. */
  title: string;
  xLabel: string;
  yLabel: string;
  /** In pixels; default 520. */
  width?: number;
  /** In pixels; default 300. */
  height?: number;
  /** Fixed y range; derived from the data when absent. */
  yRange?: [number, number];
  /** Fixed x range; derived from the data when absent. */
  xRange?: [number, number];
  /** Draw markers only (a scatter plot), e.g. for calibration. */
  scatter?: boolean;
  /** Draw the y = x diagonal (calibration plots). */
  diagonal?: boolean;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];

/** `text` with `&`, `<`, `>` and `"` escaped, for XML and HTML text and attribute values. */
export const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function niceTicks(min: number, max: number, count = 5): number[] {
  if (min === max) return [min];
  const raw = (max - min) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const ticks: number[] = [];
  for (let t = Math.ceil(min / step) * step; t <= max + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

const formatTick = (value: number) =>
  Math.abs(value) >= 1000 || (Math.abs(value) < 0.01 && value !== 0) ? value.toExponential(1) : String(Number(value.toPrecision(3)));

/**
 * Renders series as an inline SVG line (or scatter) plot: no scripts, no network, so the
 * report opens anywhere. Missing data yields a plot that says so rather than an empty box.
 */
export function renderSvgPlot(series: PlotSeries[], settings: PlotSettings): string {
  const width = settings.width ?? 520;
  const height = settings.height ?? 300;
  const margin = { left: 56, right: 16, top: 28, bottom: 44 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const all = series
    .flatMap((s) => [...s.points, ...(s.band ?? []).flatMap(([x, low, high]): Array<[number, number]> => [[x, low], [x, high]])])
    .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const header = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(settings.title)}">`;
  const title = `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14" font-weight="600">${escapeXml(settings.title)}</text>`;
  if (all.length === 0) {
    return `${header}${title}<text x="${width / 2}" y="${height / 2}" text-anchor="middle" fill="#888">no data recorded</text></svg>`;
  }
  let [xMin, xMax] = settings.xRange ?? [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))];
  let [yMin, yMax] = settings.yRange ?? [Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[1]))];
  if (xMin === xMax) [xMin, xMax] = [xMin - 1, xMax + 1];
  if (yMin === yMax) [yMin, yMax] = [yMin - 0.5, yMax + 0.5];
  const sx = (x: number) => margin.left + ((x - xMin) / (xMax - xMin)) * plotWidth;
  const sy = (y: number) => margin.top + plotHeight - ((y - yMin) / (yMax - yMin)) * plotHeight;
  const parts: string[] = [header, title];
  parts.push(`<rect x="${margin.left}" y="${margin.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#ccc"/>`);
  for (const tick of niceTicks(yMin, yMax)) {
    const y = sy(tick).toFixed(1);
    parts.push(`<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${y}" y2="${y}" stroke="#eee"/>`);
    parts.push(`<text x="${margin.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle" font-size="11">${formatTick(tick)}</text>`);
  }
  for (const tick of niceTicks(xMin, xMax)) {
    const x = sx(tick).toFixed(1);
    parts.push(`<text x="${x}" y="${margin.top + plotHeight + 16}" text-anchor="middle" font-size="11">${formatTick(tick)}</text>`);
  }
  parts.push(`<text x="${margin.left + plotWidth / 2}" y="${height - 6}" text-anchor="middle" font-size="12">${escapeXml(settings.xLabel)}</text>`);
  parts.push(`<text x="14" y="${margin.top + plotHeight / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 14 ${margin.top + plotHeight / 2})">${escapeXml(settings.yLabel)}</text>`);
  if (settings.diagonal) {
    const lo = Math.max(xMin, yMin);
    const hi = Math.min(xMax, yMax);
    parts.push(`<line x1="${sx(lo)}" y1="${sy(lo)}" x2="${sx(hi)}" y2="${sy(hi)}" stroke="#999" stroke-dasharray="4 3"/>`);
  }
  series.forEach((s, index) => {
    const color = COLORS[index % COLORS.length];
    const points = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    const band = (s.band ?? []).filter((triple) => triple.every(Number.isFinite));
    if (band.length > 1) {
      const outline = [...band.map(([x, , high]) => [x, high]), ...[...band].reverse().map(([x, low]) => [x, low])] as Array<[number, number]>;
      parts.push(`<polygon points="${outline.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')}" fill="${color}" fill-opacity="0.15" stroke="none"/>`);
    }
    if (settings.scatter || points.length === 1) {
      for (const [x, y] of points) parts.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3.5" fill="${color}"/>`);
    } else {
      const d = points.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join('');
      parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
    }
    const legendY = margin.top + 14 + index * 16;
    parts.push(`<rect x="${margin.left + 8}" y="${legendY - 9}" width="10" height="10" fill="${color}"/>`);
    parts.push(`<text x="${margin.left + 22}" y="${legendY}" font-size="11">${escapeXml(s.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

import type { RunEvent } from '@agentflow/core';

export type ProgressMode = 'tty' | 'plain' | 'json' | 'quiet';

export interface ProgressReporterSettings {
  mode: ProgressMode;
  /** Stage names in pipeline order, shown as a task list from the start. */
  stages: string[];
  write: (text: string) => void;
  now?: () => number;
  /** Minimum milliseconds between redraws (tty) or progress lines (plain). */
  intervalMs?: number;
}

export interface ProgressReporter {
  handle(event: RunEvent): void;
  /** Draws the final state; call once at the end. */
  close(): void;
}

interface StageState {
  name: string;
  status: 'pending' | 'running' | 'done' | 'skipped';
  completed: number;
  total?: number;
  startedAt?: number;
  endedAt?: number;
  metrics?: Record<string, number>;
}

const BAR_WIDTH = 24;

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return m > 0 ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}

const formatMetric = (metrics?: Record<string, number>) =>
  metrics
    ? Object.entries(metrics)
        .slice(0, 3)
        .map(([key, value]) => `${key} ${Number.isInteger(value) ? value : value.toFixed(3)}`)
        .join('  ')
    : '';

/** One line of the task list for a stage. */
export function renderStageLine(stage: StageState, now: number): string {
  const icon = { pending: '○', running: '◐', done: '✔', skipped: '↷' }[stage.status];
  const name = stage.name.padEnd(11);
  if (stage.status === 'pending') return `${icon} ${name}`;
  if (stage.status === 'skipped') return `${icon} ${name} done earlier (resumed)`;
  const elapsed = (stage.endedAt ?? now) - (stage.startedAt ?? now);
  let bar = '';
  if (stage.total && stage.total > 0) {
    const fraction = Math.min(1, stage.completed / stage.total);
    const filled = Math.round(fraction * BAR_WIDTH);
    bar = `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}] ${stage.completed}/${stage.total}`;
    if (stage.status === 'running' && stage.completed > 0) {
      bar += ` eta ${formatDuration((elapsed / stage.completed) * (stage.total - stage.completed))}`;
    }
  }
  return `${icon} ${name} ${bar} ${formatDuration(elapsed)}  ${formatMetric(stage.metrics)}`.trimEnd();
}

/**
 * Shows pipeline progress: a live task list with bars, ETA and the key metric on a
 * terminal; throttled plain lines in logs; one JSON object per event for scripts; or
 * nothing but warnings and errors.
 */
export function createProgressReporter(settings: ProgressReporterSettings): ProgressReporter {
  const now = settings.now ?? Date.now;
  const intervalMs = settings.intervalMs ?? (settings.mode === 'tty' ? 100 : 5000);
  const stages = new Map<string, StageState>(settings.stages.map((name) => [name, { name, status: 'pending', completed: 0 }]));
  let drawnLines = 0;
  let lastDraw = -Infinity;
  const lastPlain = new Map<string, number>();

  const stageOf = (name: string): StageState => {
    let stage = stages.get(name);
    if (!stage) {
      stage = { name, status: 'pending', completed: 0 };
      stages.set(name, stage);
    }
    return stage;
  };

  const draw = (force: boolean) => {
    const t = now();
    if (!force && t - lastDraw < intervalMs) return;
    lastDraw = t;
    const lines = [...stages.values()].map((stage) => renderStageLine(stage, t));
    const up = drawnLines > 0 ? `\x1b[${drawnLines}A` : '';
    settings.write(`${up}${lines.map((line) => `\x1b[2K${line}`).join('\n')}\n`);
    drawnLines = lines.length;
  };

  const apply = (event: RunEvent) => {
    switch (event.type) {
      case 'stage-start': {
        const stage = stageOf(event.stage);
        Object.assign(stage, { status: 'running', startedAt: now(), completed: 0, total: event.total });
        break;
      }
      case 'progress': {
        const stage = stageOf(event.stage);
        stage.completed = event.completed;
        if (event.total !== undefined) stage.total = event.total;
        if (event.metrics) stage.metrics = event.metrics;
        break;
      }
      case 'stage-end': {
        const stage = stageOf(event.stage);
        if (event.metrics) stage.metrics = event.metrics;
        if (stage.status === 'pending') {
          stage.status = 'skipped';
        } else {
          stage.status = 'done';
          stage.endedAt = now();
          // A stage that never reported progress is complete; one that did keeps its count
          // (DAPO stopped by dynamic sampling at step 24 of 32 shows 24/32, not 32/32).
          if (stage.total !== undefined && stage.completed === 0) stage.completed = stage.total;
        }
        break;
      }
      default:
        break;
    }
  };

  return {
    handle(event) {
      switch (settings.mode) {
        case 'json':
          settings.write(`${JSON.stringify({ time: new Date(now()).toISOString(), ...event })}\n`);
          return;
        case 'quiet':
          if (event.type === 'log' && (event.level === 'warn' || event.level === 'error')) settings.write(`${event.level}: ${event.message}\n`);
          return;
        case 'plain': {
          apply(event);
          if (event.type === 'log') {
            if (event.level !== 'debug') settings.write(`${event.level}: ${event.message}\n`);
          } else if (event.type === 'stage-start' || event.type === 'stage-end') {
            settings.write(`${renderStageLine(stageOf(event.stage), now())}\n`);
          } else if (event.type === 'progress') {
            const t = now();
            if (t - (lastPlain.get(event.stage) ?? -Infinity) >= intervalMs) {
              lastPlain.set(event.stage, t);
              settings.write(`${renderStageLine(stageOf(event.stage), t)}\n`);
            }
          }
          return;
        }
        case 'tty':
          apply(event);
          if (event.type === 'log' && event.level !== 'debug') {
            // Print the message above the task list, then redraw the list below it.
            const up = drawnLines > 0 ? `\x1b[${drawnLines}A\x1b[0J` : '';
            settings.write(`${up}${event.level}: ${event.message}\n`);
            drawnLines = 0;
            draw(true);
          } else {
            draw(event.type !== 'progress');
          }
          return;
      }
    },
    close() {
      if (settings.mode === 'tty') draw(true);
    },
  };
}

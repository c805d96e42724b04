// Pipelines: create, open by id, pause and resume, trigger a run and watch it live (polling).
// The pipelines API has no list endpoint, so the console shows the pipelines this tab knows:
// created here or opened by id, kept in memory for the chosen workspace.
import { allPages, ApiCallError, withCursor, type Page, type Pipeline, type Run } from './api.js';
import { confirmAction } from './confirm.js';
import { badge, busy, byId, cell, clear, h, shortId, time } from './dom.js';
import { announce, clearError, showError } from './messages.js';
import { gateway, getMeta } from './session.js';

/** How often a queued or running run is read again. */
const POLL_MS = 1000;
const RUNS_SHOWN = 10;
const ACTIVE = new Set(['queued', 'running']);

interface Entry {
  pipeline: Pipeline;
  /** Newest first. */
  runs: Run[];
  /** More runs exist than were read. */
  truncated: boolean;
  card: HTMLElement;
  status: HTMLElement;
  facts: HTMLElement;
  toggle: HTMLButtonElement;
  dryRun: HTMLInputElement;
  runsBody: HTMLTableSectionElement;
  runsNote: HTMLElement;
}

const entries = new Map<string, Entry>();
let pollTimer: number | undefined;
/** Bumped when the workspace changes, so answers for the previous one are dropped. */
let generation = 0;

const base = (): string => getMeta().services.find((s) => s.name === 'pipelines')?.prefix ?? '/pipelines/v3';
const pipelinePath = (id: string, rest = ''): string => `${base()}/pipelines/${encodeURIComponent(id)}${rest}`;

function describeConnector(connector: { connector: string; config: Record<string, unknown> }): string {
  const config = Object.entries(connector.config)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
  return config ? `${connector.connector} (${config})` : connector.connector;
}

function renderPipeline(entry: Entry): void {
  const { pipeline } = entry;
  entry.status.replaceChildren(badge(pipeline.status));
  const fact = (term: string, ...value: (Node | string)[]) => [h('dt', {}, term), h('dd', {}, ...value)];
  entry.facts.replaceChildren(
    ...fact('Id', h('code', {}, pipeline.id)),
    ...fact('Source', describeConnector(pipeline.source)),
    ...fact('Destination', describeConnector(pipeline.destination)),
    ...fact('Last successful run', time(pipeline.last_successful_run_at, 'none yet')),
    ...fact('Created', time(pipeline.created_at)),
  );
  // One button whose action flips keeps the keyboard focus where it was.
  entry.toggle.textContent = pipeline.status === 'active' ? 'Pause' : 'Resume';
}

function runRow(entry: Entry, run: Run): HTMLTableRowElement {
  const cancel = ACTIVE.has(run.status)
    ? h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          'aria-label': `Cancel run ${shortId(run.id)}`,
          onclick: (e: Event) => void cancelRun(entry, run, e.currentTarget as HTMLButtonElement),
        },
        'Cancel',
      )
    : null;
  return h(
    'tr',
    { 'data-run-id': run.id, 'data-status': run.status },
    cell('Run', h('code', { class: 'nowrap', title: run.id }, shortId(run.id)), run.dry_run ? ' (dry run)' : ''),
    cell('Status', badge(run.status)),
    cell('Trigger', run.trigger),
    cell('Records read', String(run.stats.records_read)),
    cell('Records written', String(run.stats.records_written)),
    cell('Attempts', String(run.attempts)),
    cell('Created', time(run.created_at)),
    cell('Started', time(run.started_at)),
    cell('Finished', time(run.finished_at)),
    run.error ? h('td', { 'data-label': 'Error', class: 'error-cell' }, h('span', {}, run.error)) : cell('Error', '—'),
    cell('', cancel),
  );
}

function renderRuns(entry: Entry): void {
  entry.runsBody.replaceChildren(...entry.runs.slice(0, RUNS_SHOWN).map((run) => runRow(entry, run)));
  entry.runsNote.textContent =
    entry.runs.length === 0
      ? 'No run yet.'
      : entry.truncated || entry.runs.length > RUNS_SHOWN
        ? `The latest ${RUNS_SHOWN} runs, newest first.`
        : 'Newest first.';
}

function createCard(pipeline: Pipeline): Entry {
  const titleId = `pipeline-${pipeline.id}-title`;
  const runsId = `pipeline-${pipeline.id}-runs`;
  const status = h('span', { class: 'pipeline-status' });
  const facts = h('dl', { class: 'facts' });
  const toggle = h('button', { type: 'button', class: 'secondary' });
  const dryRunId = `pipeline-${pipeline.id}-dry-run`;
  const dryRun = h('input', { type: 'checkbox', id: dryRunId });
  const runsBody = h('tbody');
  const runsNote = h('p', { class: 'hint' });
  const refresh = h('button', { type: 'button', class: 'secondary' }, 'Refresh');
  const forget = h('button', { type: 'button', class: 'link' }, 'Remove from this list');
  const trigger = h('button', { type: 'button' }, 'Trigger run');
  const card = h(
    'article',
    { class: 'card pipeline', 'aria-labelledby': titleId, 'data-pipeline-id': pipeline.id },
    h('header', {}, h('h3', { id: titleId, tabindex: -1 }, pipeline.name), status),
    facts,
    h('div', { class: 'actions' }, toggle, refresh, forget),
    h('div', { class: 'trigger-row' }, h('label', { class: 'choice', for: dryRunId }, dryRun, 'Dry run (read and validate, write nothing)'), trigger),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'responsive', 'aria-labelledby': runsId },
        h('caption', { id: runsId, class: 'visually-hidden' }, `Runs of ${pipeline.name}`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Run', 'Status', 'Trigger', 'Records read', 'Records written', 'Attempts', 'Created', 'Started', 'Finished', 'Error'].map((name) =>
              h('th', { scope: 'col' }, name),
            ),
            h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
          ),
        ),
        runsBody,
      ),
    ),
    runsNote,
  );
  const entry: Entry = { pipeline, runs: [], truncated: false, card, status, facts, toggle, dryRun, runsBody, runsNote };
  toggle.addEventListener('click', () => void togglePause(entry));
  refresh.addEventListener('click', () => void refreshPipeline(entry, true));
  trigger.addEventListener('click', () => void triggerRun(entry, trigger));
  forget.addEventListener('click', () => {
    entries.delete(pipeline.id);
    card.remove();
    syncEmpty();
    announce(`“${pipeline.name}” removed from this list (the pipeline itself is unchanged).`);
    byId('pipeline-name').focus();
  });
  return entry;
}

function syncEmpty(): void {
  byId('pipelines-empty').hidden = entries.size > 0;
}

/** Shows a pipeline (new or updated) and reads its runs. */
async function showPipeline(pipeline: Pipeline): Promise<Entry> {
  let entry = entries.get(pipeline.id);
  if (entry) entry.pipeline = pipeline;
  else {
    entry = createCard(pipeline);
    entries.set(pipeline.id, entry);
    byId('pipeline-list').prepend(entry.card);
  }
  renderPipeline(entry);
  syncEmpty();
  await loadRuns(entry);
  return entry;
}

async function loadRuns(entry: Entry): Promise<void> {
  const at = generation;
  const { items, complete } = await allPages((cursor) => gateway<Page<Run>>('GET', withCursor(pipelinePath(entry.pipeline.id, '/runs'), cursor)));
  if (at !== generation) return;
  entry.runs = items.reverse();
  entry.truncated = !complete;
  renderRuns(entry);
  schedulePoll();
}

async function refreshPipeline(entry: Entry, announceIt = false): Promise<void> {
  clearError();
  try {
    const pipeline = await gateway<Pipeline>('GET', pipelinePath(entry.pipeline.id));
    entry.pipeline = pipeline;
    renderPipeline(entry);
    await loadRuns(entry);
    if (announceIt) announce(`“${pipeline.name}” refreshed: ${pipeline.status}.`);
  } catch (err) {
    showError(err, 'Could not refresh the pipeline');
  }
}

async function togglePause(entry: Entry): Promise<void> {
  clearError();
  const action = entry.pipeline.status === 'active' ? 'pause' : 'resume';
  try {
    const pipeline = await busy([entry.toggle], () => gateway<Pipeline>('POST', pipelinePath(entry.pipeline.id, `/${action}`)));
    entry.pipeline = pipeline;
    renderPipeline(entry);
    announce(`“${pipeline.name}” is ${pipeline.status}.`);
  } catch (err) {
    showError(err, `Could not ${action} the pipeline`);
  }
}

async function triggerRun(entry: Entry, button: HTMLButtonElement): Promise<void> {
  clearError();
  try {
    const run = await busy([button], () =>
      gateway<Run>('POST', pipelinePath(entry.pipeline.id, '/runs'), { body: { trigger: 'manual', dry_run: entry.dryRun.checked } }),
    );
    entry.runs = [run, ...entry.runs.filter((r) => r.id !== run.id)];
    renderRuns(entry);
    announce(`Run ${shortId(run.id)} of “${entry.pipeline.name}” ${run.status}.`);
    schedulePoll();
  } catch (err) {
    if (err instanceof ApiCallError && err.status === 409 && typeof err.details.active_run_id === 'string') {
      showError(
        new Error(`A run of “${entry.pipeline.name}” is already queued or running (${shortId(err.details.active_run_id)}); wait for it to end or cancel it.`),
      );
      await loadRuns(entry).catch(() => undefined);
      return;
    }
    showError(err, 'Could not trigger a run');
  }
}

async function cancelRun(entry: Entry, run: Run, button: HTMLButtonElement): Promise<void> {
  const confirmed = await confirmAction({
    title: `Cancel run ${shortId(run.id)}?`,
    message: `The run of “${entry.pipeline.name}” stops after its current step; records already written stay written.`,
    confirmLabel: 'Cancel run',
  });
  if (!confirmed) return;
  clearError();
  try {
    const cancelled = await busy([button], () => gateway<Run>('POST', pipelinePath(entry.pipeline.id, `/runs/${encodeURIComponent(run.id)}/cancel`)));
    replaceRun(entry, cancelled);
    announce(`Run ${shortId(run.id)} cancelled.`);
  } catch (err) {
    showError(err, 'Could not cancel the run');
  }
}

/** Updates one run's row in place; keyboard focus on its button stays on the new row. */
function replaceRun(entry: Entry, run: Run): void {
  entry.runs = entry.runs.map((r) => (r.id === run.id ? run : r));
  const old = [...entry.runsBody.rows].find((row) => row.dataset.runId === run.id);
  if (!old) return renderRuns(entry);
  const hadFocus = old.contains(document.activeElement);
  const row = runRow(entry, run);
  old.replaceWith(row);
  if (hadFocus) (row.querySelector('button') ?? entry.card.querySelector<HTMLElement>('h3'))?.focus();
}

function describeRun(entry: Entry, run: Run): string {
  const stats = `${run.stats.records_read} read, ${run.stats.records_written} written`;
  const error = run.error ? `: ${run.error}` : '';
  return `Run ${shortId(run.id)} of “${entry.pipeline.name}” ${run.status} (${stats})${error}.`;
}

function activeRuns(): [Entry, Run][] {
  return [...entries.values()].flatMap((entry) => entry.runs.filter((run) => ACTIVE.has(run.status)).map((run): [Entry, Run] => [entry, run]));
}

/** Reads every queued or running run once a second until none is left; status changes are announced. */
function schedulePoll(): void {
  if (pollTimer !== undefined || activeRuns().length === 0) return;
  const at = generation;
  pollTimer = window.setTimeout(async () => {
    pollTimer = undefined;
    if (at !== generation) return;
    await Promise.all(
      activeRuns().map(async ([entry, run]) => {
        try {
          const latest = await gateway<Run>('GET', pipelinePath(entry.pipeline.id, `/runs/${encodeURIComponent(run.id)}`));
          if (at !== generation) return;
          if (JSON.stringify(latest) !== JSON.stringify(run)) replaceRun(entry, latest);
          if (latest.status !== run.status) announce(describeRun(entry, latest));
          if (!ACTIVE.has(latest.status)) {
            entry.pipeline = await gateway<Pipeline>('GET', pipelinePath(entry.pipeline.id));
            renderPipeline(entry);
          }
        } catch {
          // A failed poll (network blip, rate limit) is retried on the next tick.
        }
      }),
    );
    schedulePoll();
  }, POLL_MS);
}

function connectorConfig(): {
  source: { connector: string; config: Record<string, unknown> };
  destination: { connector: string; config: Record<string, unknown> };
} {
  const value = (id: string) => byId<HTMLInputElement>(id).value.trim();
  const connector = byId<HTMLSelectElement>('pipeline-source').value;
  const config: Record<string, unknown> = {};
  if (connector === 'sample') {
    if (value('sample-records')) config.records = Number(value('sample-records'));
    if (value('sample-seed')) config.seed = Number(value('sample-seed'));
  } else {
    config.url = value('http-url');
    if (value('http-records-path')) config.records_path = value('http-records-path');
  }
  return { source: { connector, config }, destination: { connector: 'postgres', config: { table: value('destination-table') } } };
}

async function createPipeline(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const form = event.currentTarget as HTMLFormElement;
  const name = byId<HTMLInputElement>('pipeline-name').value.trim();
  try {
    const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    const pipeline = await busy([submit], () => gateway<Pipeline>('POST', `${base()}/pipelines`, { body: { name, ...connectorConfig() } }));
    const entry = await showPipeline(pipeline);
    form.reset();
    syncSource();
    announce(`Pipeline “${pipeline.name}” created.`);
    entry.card.querySelector<HTMLElement>('h3')?.focus();
  } catch (err) {
    showError(err, 'Could not create the pipeline');
  }
}

async function openPipeline(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const form = event.currentTarget as HTMLFormElement;
  const id = byId<HTMLInputElement>('pipeline-id').value.trim().toLowerCase();
  try {
    const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    const pipeline = await busy([submit], () => gateway<Pipeline>('GET', pipelinePath(id)));
    const entry = await showPipeline(pipeline);
    form.reset();
    announce(`Pipeline “${pipeline.name}” opened.`);
    entry.card.querySelector<HTMLElement>('h3')?.focus();
  } catch (err) {
    if (err instanceof ApiCallError && err.status === 404) showError(new Error('No pipeline with this id in this workspace.'));
    else showError(err, 'Could not open the pipeline');
  }
}

function syncSource(): void {
  const sample = byId<HTMLSelectElement>('pipeline-source').value === 'sample';
  byId('source-sample-fields').hidden = !sample;
  byId('source-http-fields').hidden = sample;
  byId<HTMLInputElement>('http-url').required = !sample;
}

export function initPipelinesView(): void {
  byId('pipeline-form').addEventListener('submit', (e) => void createPipeline(e));
  byId('pipeline-open-form').addEventListener('submit', (e) => void openPipeline(e));
  byId('pipeline-source').addEventListener('change', syncSource);
  syncSource();
}

/** Forgets every pipeline of the previous workspace and stops polling. */
export function resetPipelinesView(): void {
  generation++;
  if (pollTimer !== undefined) window.clearTimeout(pollTimer);
  pollTimer = undefined;
  entries.clear();
  clear(byId('pipeline-list'));
  syncEmpty();
}

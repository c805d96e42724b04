// Pipelines: the workspace's list (GET /pipelines), create, pause and resume, the schedule (see
// and edit it, the next run), the run settings (concurrency policy, run timeout), trigger a run
// and watch it live (polling), runs waiting in line, retry a failed or cancelled run, and read a run's log.
import { allPages, pageAt, PlatformApiError, type NewPipeline, type Pipeline, type Run, type RunLogLine } from './api.js';
import { confirmAction } from './confirm.js';
import { badge, busy, byId, cell, clear, formToggleById, h, shortId, time, type FormToggle } from './dom.js';
import { announce, clearError, showError } from './messages.js';
import {
  canCancel,
  canRetry,
  describeAttempt,
  describeConcurrencyPolicy,
  describeConnector,
  describeLinePlace,
  describeLogData,
  describeRunTimeout,
  describeSchedule,
  fieldsOf,
  linePlaces,
  runSettingsFieldsOf,
  runSettingsFromFields,
  scheduleFromFields,
  type RunSettingsFields,
  type ScheduleFields,
} from './pipelines.format.js';
import { setWorkspaceAddress } from './address.js';
import { formatInZone, formatTime, scheduleZone } from './time.format.js';
import { routeHash, workspaceRoute, type Detail } from './route.format.js';
import { currentWorkspace, gateway } from './session.js';
import { seriesChartView, type SeriesChartView } from './series.chart.js';
import { runSeriesChart } from './series.format.js';

/** How often queued or running runs, open logs and due schedules are read again. */
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
  schedule: ScheduleEditor;
  settings: RunSettingsEditor;
  /** The run whose log is open below the runs table, if any. */
  log?: OpenLog;
}

interface ScheduleEditor {
  details: HTMLDetailsElement;
  form: HTMLFormElement;
  type: HTMLSelectElement;
  everySeconds: HTMLInputElement;
  cron: HTMLInputElement;
  timezone: HTMLInputElement;
  intervalFields: HTMLElement;
  cronFields: HTMLElement;
}

interface RunSettingsEditor {
  details: HTMLDetailsElement;
  form: HTMLFormElement;
  policy: HTMLSelectElement;
  timeoutSeconds: HTMLInputElement;
}

interface OpenLog {
  runId: string;
  region: HTMLElement;
  body: HTMLTableSectionElement;
  note: HTMLElement;
  /** Lines already shown, so a poll only adds the new ones. */
  shown: number;
}

const entries = new Map<string, Entry>();
let pollTimer: number | undefined;
let loaded = false;
let pipelineForm: FormToggle | undefined;
let nextPageCursor: string | null = null;
/** Bumped when the workspace changes, so answers for the previous one are dropped. */
let generation = 0;

const ofPipeline = (entry: Entry) => ({ path: { id: entry.pipeline.id } });
const ofRun = (entry: Entry, runId: string) => ({ path: { id: entry.pipeline.id, run_id: runId } });

function nextRun(pipeline: Pipeline): Node | string {
  if (pipeline.schedule === null) return '—';
  if (pipeline.status === 'paused') return 'none while paused';
  // A cron runs in its own zone: its next run reads in that zone, with UTC beside it.
  return time(pipeline.next_run_at, '—', scheduleZone(pipeline.schedule));
}

function renderPipeline(entry: Entry): void {
  const { pipeline } = entry;
  entry.status.replaceChildren(badge(pipeline.status));
  const fact = (term: string, ...value: (Node | string)[]) => [h('dt', {}, term), h('dd', { 'data-fact': term }, ...value)];
  entry.facts.replaceChildren(
    ...fact('Id', h('code', {}, pipeline.id)),
    ...fact('Source', describeConnector(pipeline.source)),
    ...fact('Destination', describeConnector(pipeline.destination)),
    ...fact('Schedule', describeSchedule(pipeline.schedule)),
    ...fact('Next run', nextRun(pipeline)),
    ...fact('Concurrency policy', describeConcurrencyPolicy(pipeline.concurrency_policy)),
    ...fact('Run timeout', describeRunTimeout(pipeline.run_timeout_seconds)),
    ...fact('Last successful run', time(pipeline.last_successful_run_at, 'none yet')),
    ...fact('Created', time(pipeline.created_at)),
  );
  // One button whose action flips keeps the keyboard focus where it was.
  entry.toggle.textContent = pipeline.status === 'active' ? 'Pause' : 'Resume';
  // A closed editor follows the stored schedule; an open one keeps what is being typed.
  if (!entry.schedule.details.open) showScheduleFields(entry.schedule, fieldsOf(pipeline.schedule));
  if (!entry.settings.details.open) showRunSettings(entry.settings, runSettingsFieldsOf(pipeline));
}

function runRow(entry: Entry, run: Run): HTMLTableRowElement {
  const cancel = canCancel(run.status)
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
  const logOpen = entry.log?.runId === run.id;
  const log = h(
    'button',
    {
      type: 'button',
      class: 'link',
      'aria-label': `${logOpen ? 'Hide' : 'Show'} the log of run ${shortId(run.id)}`,
      'aria-expanded': String(logOpen),
      onclick: () => void toggleLog(entry, run.id),
    },
    logOpen ? 'Hide log' : 'Log',
  );
  const retry = canRetry(run.status)
    ? h(
        'button',
        {
          type: 'button',
          class: 'link',
          'aria-label': `Retry run ${shortId(run.id)}`,
          onclick: (e: Event) => void retryRun(entry, run, e.currentTarget as HTMLButtonElement),
        },
        'Retry',
      )
    : null;
  return h(
    'tr',
    { 'data-run-id': run.id, 'data-status': run.status },
    cell('Run', h('code', { class: 'nowrap', title: run.id }, shortId(run.id)), run.dry_run ? ' (dry run)' : '', retryOf(run)),
    cell('Status', badge(run.status), linePlace(entry, run)),
    cell('Trigger', run.trigger),
    cell('Scheduled for', time(run.scheduled_for, '—', scheduleZone(entry.pipeline.schedule))),
    cell('Records read', String(run.stats.records_read)),
    cell('Records written', String(run.stats.records_written)),
    cell('Attempts', String(run.attempts)),
    cell('Created', time(run.created_at)),
    cell('Started', time(run.started_at)),
    cell('Finished', time(run.finished_at)),
    run.error ? h('td', { 'data-label': 'Error', class: 'error-cell' }, h('span', {}, run.error.message)) : cell('Error', '—'),
    cell('', log, cancel, retry),
  );
}

/** ` retry of 1a2b3c4d` after the run's id, for a run that retries another. */
function retryOf(run: Run): HTMLElement | null {
  if (run.retry_of === null) return null;
  return h(
    'span',
    { class: 'retry-of', 'data-retry-of': run.retry_of },
    ' retry of ',
    h('code', { class: 'nowrap', title: run.retry_of }, shortId(run.retry_of)),
  );
}

/** ` 2nd of 3 in line` beside a pending run's status. */
function linePlace(entry: Entry, run: Run): string {
  const places = linePlaces(entry.runs);
  const place = places.get(run.id);
  return place === undefined ? '' : ` ${describeLinePlace(place, places.size)}`;
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

/** The schedule editor of one card: type, then the interval or the cron and its time zone. */
function scheduleEditor(pipeline: Pipeline): ScheduleEditor {
  const id = (name: string) => `pipeline-${pipeline.id}-${name}`;
  const type = h(
    'select',
    { id: id('schedule-type') },
    h('option', { value: 'none' }, 'No schedule'),
    h('option', { value: 'interval' }, 'Every n seconds'),
    h('option', { value: 'cron' }, 'Cron'),
  );
  const everySeconds = h('input', { id: id('every-seconds'), type: 'number', min: 1, step: 1, inputmode: 'numeric' });
  const cron = h('input', { id: id('cron'), type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: '0 6 * * MON-FRI' });
  const timezone = h('input', { id: id('timezone'), type: 'text', autocomplete: 'off', spellcheck: 'false', list: 'timezones' });
  const field = (input: HTMLElement, label: string) => h('div', { class: 'field' }, h('label', { for: input.id }, label), input);
  const intervalFields = h('div', { class: 'field-row' }, field(everySeconds, 'Interval (seconds)'));
  const cronFields = h('div', { class: 'field-row' }, field(cron, 'Cron (minute hour day month weekday)'), field(timezone, 'Time zone (IANA)'));
  const form = h(
    'form',
    { class: 'schedule-form stack', 'aria-label': `Schedule of ${pipeline.name}` },
    field(type, 'Schedule'),
    intervalFields,
    cronFields,
    h('button', { type: 'submit' }, 'Save schedule'),
  );
  const details = h('details', { class: 'schedule' }, h('summary', {}, 'Edit schedule'), form);
  return { details, form, type, everySeconds, cron, timezone, intervalFields, cronFields };
}

function showScheduleFields(editor: ScheduleEditor, fields: ScheduleFields): void {
  editor.type.value = fields.type;
  editor.everySeconds.value = fields.everySeconds;
  editor.cron.value = fields.cron;
  editor.timezone.value = fields.timezone;
  syncScheduleType(editor);
}

function syncScheduleType(editor: ScheduleEditor): void {
  editor.intervalFields.hidden = editor.type.value !== 'interval';
  editor.cronFields.hidden = editor.type.value !== 'cron';
}

function readScheduleFields(editor: ScheduleEditor): ScheduleFields {
  return { type: editor.type.value, everySeconds: editor.everySeconds.value, cron: editor.cron.value, timezone: editor.timezone.value };
}

/** The run settings editor of one card: the concurrency policy and the run timeout (contract section 19). */
function runSettingsEditor(pipeline: Pipeline): RunSettingsEditor {
  const id = (name: string) => `pipeline-${pipeline.id}-${name}`;
  const policy = h(
    'select',
    { id: id('concurrency-policy') },
    h('option', { value: 'reject' }, 'Reject a trigger while a run is active'),
    h('option', { value: 'enqueue' }, 'Enqueue it (pending, in trigger order)'),
  );
  const timeoutSeconds = h('input', { id: id('run-timeout'), type: 'number', step: 1, inputmode: 'numeric', placeholder: 'none' });
  const field = (input: HTMLElement, label: string) => h('div', { class: 'field' }, h('label', { for: input.id }, label), input);
  const form = h(
    'form',
    { class: 'run-settings-form stack', 'aria-label': `Run settings of ${pipeline.name}` },
    field(policy, 'Concurrency policy'),
    field(timeoutSeconds, 'Run timeout (seconds, 10 to 86,400; empty for none)'),
    h('button', { type: 'submit' }, 'Save run settings'),
  );
  const details = h('details', { class: 'schedule run-settings' }, h('summary', {}, 'Edit run settings'), form);
  return { details, form, policy, timeoutSeconds };
}

function showRunSettings(editor: RunSettingsEditor, fields: RunSettingsFields): void {
  editor.policy.value = fields.policy;
  editor.timeoutSeconds.value = fields.timeoutSeconds;
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
  const trigger = h('button', { type: 'button' }, 'Trigger run');
  const schedule = scheduleEditor(pipeline);
  const settings = runSettingsEditor(pipeline);
  const card = h(
    'article',
    { class: 'card pipeline', 'aria-labelledby': titleId, 'data-pipeline-id': pipeline.id },
    h(
      'header',
      {},
      h('h3', { id: titleId, tabindex: -1 }, h('a', { href: pipelineHref(pipeline.id), title: 'This pipeline’s address' }, pipeline.name)),
      status,
    ),
    facts,
    h('div', { class: 'actions' }, toggle, refresh),
    schedule.details,
    settings.details,
    h('div', { class: 'trigger-row' }, h('label', { class: 'choice', for: dryRunId }, dryRun, 'Dry run (read and validate, write nothing)'), trigger),
    runsChartDisclosure(pipeline),
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
            ...['Run', 'Status', 'Trigger', 'Scheduled for', 'Records read', 'Records written', 'Attempts', 'Created', 'Started', 'Finished', 'Error'].map(
              (name) => h('th', { scope: 'col' }, name),
            ),
            h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
          ),
        ),
        runsBody,
      ),
    ),
    runsNote,
  );
  const entry: Entry = { pipeline, runs: [], truncated: false, card, status, facts, toggle, dryRun, runsBody, runsNote, schedule, settings };
  toggle.addEventListener('click', () => void togglePause(entry));
  refresh.addEventListener('click', () => void refreshPipeline(entry, true));
  trigger.addEventListener('click', () => void triggerRun(entry, trigger));
  schedule.type.addEventListener('change', () => syncScheduleType(schedule));
  schedule.form.addEventListener('submit', (e) => void saveSchedule(entry, e));
  settings.form.addEventListener('submit', (e) => void saveRunSettings(entry, e));
  return entry;
}

/** The pipeline's own address (a link to share, or to show it alone in the address bar). */
const pipelineHref = (id: string): string => routeHash(workspaceRoute(currentWorkspace().id, 'pipelines', { kind: 'pipeline', id }));

function syncEmpty(): void {
  byId('pipelines-empty').hidden = entries.size > 0;
  byId('pipelines-more').hidden = nextPageCursor === null;
}

/** Shows a pipeline (new or updated) and reads its runs; new pipelines go first or, when listed, last. */
async function showPipeline(pipeline: Pipeline, placement: 'first' | 'last' = 'first'): Promise<Entry> {
  let entry = entries.get(pipeline.id);
  if (entry) entry.pipeline = pipeline;
  else {
    entry = createCard(pipeline);
    entries.set(pipeline.id, entry);
    if (placement === 'first') byId('pipeline-list').prepend(entry.card);
    else byId('pipeline-list').append(entry.card);
  }
  renderPipeline(entry);
  syncEmpty();
  await loadRuns(entry);
  return entry;
}

/** The filter's options are the pipeline statuses, and '' for all. */
function statusFilter(): Pipeline['status'] | undefined {
  return (byId<HTMLSelectElement>('pipelines-status').value || undefined) as Pipeline['status'] | undefined;
}

/** One page (100) of the workspace's pipelines, oldest first, each shown with its runs. */
async function loadPipelinesPage(cursor: string | null): Promise<void> {
  const at = generation;
  const filter = statusFilter();
  const page = await gateway((platform) => platform.pipelines.GET('/pipelines', { params: { query: { status: filter, ...pageAt(cursor) } } }));
  if (at !== generation) return;
  nextPageCursor = page.next_cursor;
  await Promise.all(page.data.map((pipeline) => showPipeline(pipeline, 'last')));
  syncEmpty();
}

/** Reads the list again from its first page (after a filter change or on Refresh). */
async function reloadPipelines(): Promise<void> {
  clearError();
  resetList();
  try {
    await loadPipelinesPage(null);
    announce(`${entries.size} pipeline${entries.size === 1 ? '' : 's'} shown${nextPageCursor ? '; more can be loaded' : ''}.`);
  } catch (err) {
    showError(err, 'Could not list the pipelines');
  }
}

async function loadRuns(entry: Entry): Promise<void> {
  const at = generation;
  const { items, complete } = await allPages((cursor) =>
    gateway((platform) => platform.pipelines.GET('/pipelines/{id}/runs', { params: { ...ofPipeline(entry), query: pageAt(cursor) } })),
  );
  if (at !== generation) return;
  entry.runs = items.reverse();
  entry.truncated = !complete;
  renderRuns(entry);
  schedulePoll();
}

async function refreshPipeline(entry: Entry, announceIt = false): Promise<void> {
  clearError();
  try {
    const pipeline = await gateway((platform) => platform.pipelines.GET('/pipelines/{id}', { params: ofPipeline(entry) }));
    entry.pipeline = pipeline;
    renderPipeline(entry);
    await loadRuns(entry);
    await refreshRunsChart(pipeline.id);
    if (entry.log) await loadLog(entry, entry.log);
    if (announceIt) announce(`“${pipeline.name}” refreshed: ${pipeline.status}.`);
  } catch (err) {
    showError(err, 'Could not refresh the pipeline');
  }
}

async function togglePause(entry: Entry): Promise<void> {
  clearError();
  const action = entry.pipeline.status === 'active' ? 'pause' : 'resume';
  try {
    const pipeline = await busy([entry.toggle], () =>
      gateway((platform) => platform.pipelines.POST(`/pipelines/{id}/${action}`, { params: ofPipeline(entry) })),
    );
    entry.pipeline = pipeline;
    renderPipeline(entry);
    announce(`“${pipeline.name}” is ${pipeline.status}.`);
    schedulePoll();
  } catch (err) {
    showError(err, `Could not ${action} the pipeline`);
  }
}

async function saveSchedule(entry: Entry, event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const fields = scheduleFromFields(readScheduleFields(entry.schedule));
  if ('problem' in fields) return showError(new Error(fields.problem));
  try {
    const submit = entry.schedule.form.querySelector<HTMLButtonElement>('button[type="submit"]');
    const pipeline = await busy([submit], () =>
      gateway((platform) => platform.pipelines.PATCH('/pipelines/{id}', { params: ofPipeline(entry), body: { schedule: fields.schedule } })),
    );
    entry.pipeline = pipeline;
    renderPipeline(entry);
    const zone = scheduleZone(pipeline.schedule);
    const next = pipeline.next_run_at ? `; next run ${zone ? formatInZone(pipeline.next_run_at, zone) : formatTime(pipeline.next_run_at)}` : '';
    announce(`Schedule of “${pipeline.name}”: ${describeSchedule(pipeline.schedule)}${next}.`);
    schedulePoll();
  } catch (err) {
    showError(err, 'Could not save the schedule');
  }
}

async function saveRunSettings(entry: Entry, event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const fields = runSettingsFromFields({ policy: entry.settings.policy.value, timeoutSeconds: entry.settings.timeoutSeconds.value });
  if ('problem' in fields) return showError(new Error(fields.problem));
  try {
    const submit = entry.settings.form.querySelector<HTMLButtonElement>('button[type="submit"]');
    const pipeline = await busy([submit], () =>
      gateway((platform) => platform.pipelines.PATCH('/pipelines/{id}', { params: ofPipeline(entry), body: fields.settings })),
    );
    entry.pipeline = pipeline;
    renderPipeline(entry);
    announce(`Run settings of “${pipeline.name}”: ${pipeline.concurrency_policy}, run timeout ${describeRunTimeout(pipeline.run_timeout_seconds)}.`);
  } catch (err) {
    showError(err, 'Could not save the run settings');
  }
}

/** A new run with the failed or cancelled run's trigger, since and dry run; pending when the pipeline enqueues and a run is active. */
async function retryRun(entry: Entry, run: Run, button: HTMLButtonElement): Promise<void> {
  clearError();
  try {
    const retry = await busy([button], () =>
      gateway((platform) => platform.pipelines.POST('/pipelines/{id}/runs/{run_id}/retry', { params: ofRun(entry, run.id) })),
    );
    entry.runs = [retry, ...entry.runs.filter((r) => r.id !== retry.id)];
    renderRuns(entry);
    announce(`Run ${shortId(retry.id)} retries run ${shortId(run.id)} of “${entry.pipeline.name}”: ${retry.status}.`);
    schedulePoll();
  } catch (err) {
    showError(err, `Could not retry run ${shortId(run.id)}`);
  }
}

async function triggerRun(entry: Entry, button: HTMLButtonElement): Promise<void> {
  clearError();
  try {
    const run = await busy([button], () =>
      gateway((platform) =>
        platform.pipelines.POST('/pipelines/{id}/runs', { params: ofPipeline(entry), body: { trigger: 'manual', dry_run: entry.dryRun.checked } }),
      ),
    );
    entry.runs = [run, ...entry.runs.filter((r) => r.id !== run.id)];
    renderRuns(entry);
    announce(`Run ${shortId(run.id)} of “${entry.pipeline.name}” ${run.status}.`);
    schedulePoll();
  } catch (err) {
    if (err instanceof PlatformApiError && err.status === 409 && typeof err.details.active_run_id === 'string') {
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
    message:
      run.status === 'pending'
        ? `The pending run of “${entry.pipeline.name}” leaves the line; the runs behind it move up.`
        : `The run of “${entry.pipeline.name}” stops after its current step; records already written stay written.`,
    confirmLabel: 'Cancel run',
  });
  if (!confirmed) return;
  clearError();
  try {
    const cancelled = await busy([button], () =>
      gateway((platform) => platform.pipelines.POST('/pipelines/{id}/runs/{run_id}/cancel', { params: ofRun(entry, run.id) })),
    );
    replaceRun(entry, cancelled);
    if (run.status === 'pending') renumberLine(entry);
    announce(`Run ${shortId(run.id)} cancelled.`);
  } catch (err) {
    showError(err, 'Could not cancel the run');
  }
}

/** Shows each pending run's place again (one left the line), row by row so the keyboard focus stays. */
function renumberLine(entry: Entry): void {
  for (const run of entry.runs) if (run.status === 'pending') replaceRun(entry, run);
}

/** Updates one run's row in place; keyboard focus on its button stays on the new row. */
function replaceRun(entry: Entry, run: Run): void {
  entry.runs = entry.runs.map((r) => (r.id === run.id ? run : r));
  const old = [...entry.runsBody.rows].find((row) => row.dataset.runId === run.id);
  if (!old) return renderRuns(entry);
  const focused = document.activeElement instanceof HTMLButtonElement && old.contains(document.activeElement) ? document.activeElement.textContent : null;
  const row = runRow(entry, run);
  old.replaceWith(row);
  if (focused !== null) {
    const same = [...row.querySelectorAll('button')].find((button) => button.textContent === focused);
    (same ?? row.querySelector('button') ?? entry.card.querySelector<HTMLElement>('h3'))?.focus();
  }
}

function logLineRow(line: RunLogLine): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-level': line.level },
    cell('Time', time(line.at)),
    cell('Attempt', describeAttempt(line.attempt)),
    cell('Level', badge(line.level, `log-${line.level}`)),
    cell('Message', line.message),
    cell('Details', describeLogData(line.data) || '—'),
  );
}

async function toggleLog(entry: Entry, runId: string): Promise<void> {
  const closing = entry.log?.runId === runId;
  entry.log?.region.remove();
  entry.log = undefined;
  if (!closing) {
    const title = `Log of run ${shortId(runId)}`;
    const titleId = `run-${runId}-log-title`;
    const body = h('tbody');
    const note = h('p', { class: 'hint' });
    const region = h(
      'section',
      { class: 'run-log', 'aria-labelledby': titleId, 'data-run-id': runId },
      h('h4', { id: titleId, tabindex: -1 }, title),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'responsive', 'aria-labelledby': titleId },
          h('thead', {}, h('tr', {}, ...['Time', 'Attempt', 'Level', 'Message', 'Details'].map((name) => h('th', { scope: 'col' }, name)))),
          body,
        ),
      ),
      note,
    );
    entry.log = { runId, region, body, note, shown: 0 };
    entry.runsNote.after(region);
  }
  renderRuns(entry);
  markShown(entry);
  setWorkspaceAddress('pipelines', { kind: 'pipeline', id: entry.pipeline.id, runId: entry.log?.runId });
  // Focus follows the user: onto the log when it opens, back onto the run's button when it closes.
  const button = [...entry.runsBody.rows].find((row) => row.dataset.runId === runId)?.querySelector<HTMLButtonElement>('button.link');
  if (closing || !entry.log) return button?.focus();
  entry.log.region.querySelector<HTMLElement>('h4')?.focus();
  clearError();
  try {
    await loadLog(entry, entry.log);
  } catch (err) {
    showError(err, 'Could not read the run log');
  }
}

/** Shows the pipeline an address names (read by id when it is not listed), and the log of its run if one is named. */
export async function followPipelineAddress(detail: { id: string; runId?: string } | undefined): Promise<void> {
  if (detail === undefined) return markShown(undefined);
  const entry =
    entries.get(detail.id) ??
    (await showPipeline(await gateway((platform) => platform.pipelines.GET('/pipelines/{id}', { params: { path: { id: detail.id } } }))));
  markShown(entry);
  entry.card.querySelector<HTMLElement>('h3')?.focus();
  if (detail.runId === undefined) {
    if (entry.log) await toggleLog(entry, entry.log.runId);
    return;
  }
  if (entry.log?.runId === detail.runId) return;
  // A run of another pipeline, or none: 404 before a log region opens for it.
  await gateway((platform) => platform.pipelines.GET('/pipelines/{id}/runs/{run_id}', { params: ofRun(entry, detail.runId!) }));
  await toggleLog(entry, detail.runId);
}

/** Marks the card whose address is shown (aria-current). */
function markShown(entry: Entry | undefined): void {
  for (const card of byId('pipeline-list').querySelectorAll('[aria-current]')) card.removeAttribute('aria-current');
  entry?.card.setAttribute('aria-current', 'true');
}

/** The pipeline shown by its address, with its open log, for the tab's address. */
export function shownPipeline(): Detail | undefined {
  const card = byId('pipeline-list').querySelector<HTMLElement>('[aria-current]');
  const entry = card?.dataset.pipelineId ? entries.get(card.dataset.pipelineId) : undefined;
  return entry ? { kind: 'pipeline', id: entry.pipeline.id, runId: entry.log?.runId } : undefined;
}

/** Reads the open log from its start and shows the lines not shown yet (a log only grows). */
async function loadLog(entry: Entry, log: OpenLog): Promise<void> {
  const at = generation;
  const { items, complete } = await allPages((cursor) =>
    gateway((platform) => platform.pipelines.GET('/pipelines/{id}/runs/{run_id}/logs', { params: { ...ofRun(entry, log.runId), query: pageAt(cursor) } })),
  );
  if (at !== generation || entry.log !== log) return;
  log.body.append(...items.slice(log.shown).map(logLineRow));
  log.shown = Math.max(log.shown, items.length);
  log.note.textContent = items.length === 0 ? 'No line yet.' : complete ? 'Oldest first.' : `The first ${items.length} lines, oldest first.`;
}

function describeRun(entry: Entry, run: Run): string {
  const stats = `${run.stats.records_read} read, ${run.stats.records_written} written`;
  const error = run.error ? `: ${run.error.message}` : '';
  return `Run ${shortId(run.id)} of “${entry.pipeline.name}” ${run.status} (${stats})${error}.`;
}

/** Runs read one by one; a pipeline with runs waiting in line is read as a whole instead (followLine). */
function activeRuns(): [Entry, Run][] {
  return [...entries.values()]
    .filter((entry) => !waiting(entry))
    .flatMap((entry) => entry.runs.filter((run) => ACTIVE.has(run.status)).map((run): [Entry, Run] => [entry, run]));
}

const waiting = (entry: Entry): boolean => entry.runs.some((run) => run.status === 'pending');

/**
 * Reads the runs of a pipeline with runs waiting in line as one list (a request per run would
 * outrun the rate limit with 20 waiting), shows the rows that changed (a place in line too) and
 * announces each new status; a run that ended has the pipeline read again.
 */
async function followLine(entry: Entry, at: number): Promise<void> {
  const before = new Map(entry.runs.map((run) => [run.id, run]));
  const placesBefore = linePlaces(entry.runs);
  const { items, complete } = await allPages((cursor) =>
    gateway((platform) => platform.pipelines.GET('/pipelines/{id}/runs', { params: { ...ofPipeline(entry), query: pageAt(cursor) } })),
  );
  if (at !== generation) return;
  const runs = items.reverse();
  const sameRows = runs.length === entry.runs.length && runs.every((run, i) => run.id === entry.runs[i]?.id);
  entry.runs = runs;
  entry.truncated = !complete;
  const placesAfter = linePlaces(runs);
  const changed = runs.filter((run) => JSON.stringify(run) !== JSON.stringify(before.get(run.id)) || placesBefore.get(run.id) !== placesAfter.get(run.id));
  // Rows replaced one by one keep the keyboard focus on a Cancel button of a run still waiting.
  if (sameRows) for (const run of changed) replaceRun(entry, run);
  else renderRuns(entry);
  const moved = runs.filter((run) => before.has(run.id) && before.get(run.id)?.status !== run.status);
  for (const run of moved) announce(describeRun(entry, run));
  if (moved.some((run) => !ACTIVE.has(run.status))) {
    entry.pipeline = await gateway((platform) => platform.pipelines.GET('/pipelines/{id}', { params: ofPipeline(entry) }));
    renderPipeline(entry);
  }
}

/** Pipelines whose next tick has come: the tick's run appears without anyone triggering it. */
function dueSchedules(): Entry[] {
  const now = Date.now();
  return [...entries.values()].filter((entry) => entry.pipeline.next_run_at !== null && Date.parse(entry.pipeline.next_run_at) <= now);
}

function openActiveLogs(): Entry[] {
  return [...entries.values()].filter((entry) => entry.log && entry.runs.some((run) => run.id === entry.log?.runId && ACTIVE.has(run.status)));
}

/** A scheduled pipeline keeps the (cheap) timer going: it reads nothing until the pipeline's next run is due. */
function pollNeeded(): boolean {
  return (
    activeRuns().length > 0 ||
    openActiveLogs().length > 0 ||
    [...entries.values()].some(waiting) ||
    [...entries.values()].some((entry) => entry.pipeline.next_run_at !== null)
  );
}

/** Reads active runs, open logs of active runs and due schedules once a second while any is left (or scheduled); status changes are announced. */
function schedulePoll(): void {
  if (pollTimer !== undefined || !pollNeeded()) return;
  const at = generation;
  pollTimer = window.setTimeout(async () => {
    pollTimer = undefined;
    if (at !== generation) return;
    const logs = openActiveLogs();
    await Promise.all([
      ...activeRuns().map(async ([entry, run]) => {
        try {
          const latest = await gateway((platform) => platform.pipelines.GET('/pipelines/{id}/runs/{run_id}', { params: ofRun(entry, run.id) }));
          if (at !== generation) return;
          if (JSON.stringify(latest) !== JSON.stringify(run)) replaceRun(entry, latest);
          if (latest.status !== run.status) announce(describeRun(entry, latest));
          if (!ACTIVE.has(latest.status)) {
            entry.pipeline = await gateway((platform) => platform.pipelines.GET('/pipelines/{id}', { params: ofPipeline(entry) }));
            renderPipeline(entry);
          }
        } catch {
          // A failed poll (network blip, rate limit) is retried on the next tick.
        }
      }),
      ...dueSchedules().map(async (entry) => {
        try {
          entry.pipeline = await gateway((platform) => platform.pipelines.GET('/pipelines/{id}', { params: ofPipeline(entry) }));
          renderPipeline(entry);
          await loadRuns(entry);
        } catch {
          // Read again on the next tick.
        }
      }),
      ...logs.map((entry) => (entry.log ? loadLog(entry, entry.log).catch(() => undefined) : undefined)),
      // A failed read of a line is tried again on the next tick.
      ...[...entries.values()].filter(waiting).map((entry) => followLine(entry, at).catch(() => undefined)),
    ]);
    schedulePoll();
  }, POLL_MS);
}

function connectorConfig(): Pick<NewPipeline, 'source' | 'destination'> {
  const value = (id: string) => byId<HTMLInputElement>(id).value.trim();
  const destination = { connector: 'postgres', config: { table: value('destination-table') } } as const;
  if (byId<HTMLSelectElement>('pipeline-source').value === 'sample') {
    const config: { records?: number; seed?: number } = {};
    if (value('sample-records')) config.records = Number(value('sample-records'));
    if (value('sample-seed')) config.seed = Number(value('sample-seed'));
    return { source: { connector: 'sample', config }, destination };
  }
  const config: { url: string; records_path?: string } = { url: value('http-url') };
  if (value('http-records-path')) config.records_path = value('http-records-path');
  return { source: { connector: 'http-json', config }, destination };
}

function createFormSchedule(): ReturnType<typeof scheduleFromFields> {
  const value = (id: string) => byId<HTMLInputElement | HTMLSelectElement>(id).value;
  return scheduleFromFields({
    type: value('new-schedule-type'),
    everySeconds: value('new-every-seconds'),
    cron: value('new-cron'),
    timezone: value('new-timezone'),
  });
}

async function createPipeline(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const form = event.currentTarget as HTMLFormElement;
  const name = byId<HTMLInputElement>('pipeline-name').value.trim();
  const schedule = createFormSchedule();
  if ('problem' in schedule) return showError(new Error(schedule.problem));
  try {
    const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    const body = { name, ...connectorConfig(), ...(schedule.schedule ? { schedule: schedule.schedule } : {}) };
    const pipeline = await busy([submit], () => gateway((platform) => platform.pipelines.POST('/pipelines', { body })));
    const entry = await showPipeline(pipeline);
    pipelineForm?.close();
    announce(`Pipeline “${pipeline.name}” created.`);
    entry.card.querySelector<HTMLElement>('h3')?.focus();
  } catch (err) {
    showError(err, 'Could not create the pipeline');
  }
}

function syncCreateForm(): void {
  const sample = byId<HTMLSelectElement>('pipeline-source').value === 'sample';
  byId('source-sample-fields').hidden = !sample;
  byId('source-http-fields').hidden = sample;
  byId<HTMLInputElement>('http-url').required = !sample;
  const scheduleType = byId<HTMLSelectElement>('new-schedule-type').value;
  byId('new-interval-fields').hidden = scheduleType !== 'interval';
  byId('new-cron-fields').hidden = scheduleType !== 'cron';
}

/** The time zones the browser knows, offered while typing one (the API decides what is valid). */
function fillTimezones(): void {
  const list = byId('timezones');
  if (list.childElementCount > 0) return;
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  list.append(...['UTC', ...zones.filter((zone) => zone !== 'UTC')].map((zone) => h('option', { value: zone })));
}

export function initPipelinesView(): void {
  pipelineForm = formToggleById('pipeline-new', 'pipeline-form', 'pipeline-form-cancel', syncCreateForm);
  byId('pipeline-form').addEventListener('submit', (e) => void createPipeline(e));
  byId('pipeline-source').addEventListener('change', syncCreateForm);
  byId('new-schedule-type').addEventListener('change', syncCreateForm);
  byId('pipelines-status').addEventListener('change', () => void reloadPipelines());
  byId('pipelines-refresh').addEventListener('click', () => void reloadPipelines());
  byId('pipelines-more').addEventListener('click', () => {
    loadPipelinesPage(nextPageCursor).catch((err: unknown) => showError(err, 'Could not list more pipelines'));
  });
  fillTimezones();
  syncCreateForm();
}

/** Lists the workspace's pipelines the first time the tab is shown. */
export async function showPipelines(): Promise<void> {
  if (loaded) return;
  loaded = true;
  try {
    await loadPipelinesPage(null);
  } catch (err) {
    loaded = false;
    showError(err, 'Could not list the pipelines');
  }
}

function resetList(): void {
  generation++;
  if (pollTimer !== undefined) window.clearTimeout(pollTimer);
  pollTimer = undefined;
  nextPageCursor = null;
  entries.clear();
  closeRunsCharts();
  clear(byId('pipeline-list'));
  syncEmpty();
}

/** Forgets every pipeline of the previous workspace and stops polling. */
export function resetPipelinesView(): void {
  loaded = false;
  pipelineForm?.close();
  resetList();
}

/** The open charts of runs per hour or day, by pipeline id. */
const runCharts = new Map<string, SeriesChartView>();

/** A card's chart of its runs by status (GET /pipelines/{id}/stats/series), read when it is opened. */
function runsChartDisclosure(pipeline: Pipeline): HTMLDetailsElement {
  const chart = seriesChartView({
    id: `pipeline-${pipeline.id}-runs-chart`,
    title: 'Runs by status',
    noun: { one: 'run', many: 'runs' },
    read: async (interval) =>
      runSeriesChart(
        await gateway((platform) => platform.pipelines.GET('/pipelines/{id}/stats/series', { params: { path: { id: pipeline.id }, query: { interval } } })),
      ),
  });
  const details = h('details', { class: 'runs-chart' }, h('summary', {}, 'Runs over time'), chart.section);
  details.addEventListener('toggle', () => {
    if (!details.open) {
      runCharts.delete(pipeline.id);
      return chart.destroy();
    }
    runCharts.set(pipeline.id, chart);
    chart.refresh().catch((err: unknown) => showError(err, 'Could not read the runs over time'));
  });
  return details;
}

/** Reads a pipeline's chart again if it is open. */
async function refreshRunsChart(pipelineId: string): Promise<void> {
  await runCharts.get(pipelineId)?.refresh();
}

function closeRunsCharts(): void {
  for (const chart of runCharts.values()) chart.destroy();
  runCharts.clear();
}

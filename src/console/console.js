// The approval console: polls /v1/approvals?status=pending with the approver's token (asked once, kept in
// sessionStorage for this tab), shows each request's changes (every path with its operation and diff, the
// content a delete removes; a command's line, directory, network and limits), approves or rejects with a reason,
// says so, and lists the decisions of this tab. Below them, the project's turns (list_checkpoints): what each
// agent turn changed, with diffs, and "rewind to before this turn" (rewind: its preview first, then a confirmation).
// Plain browser JavaScript with no dependencies: it is served as is, also in clusters without internet.
const POLL_MS = 2000;
const TOKEN_KEY = 'toolgate.approver-token';

const $ = (id) => document.getElementById(id);
const list = $('list');
const statusLine = $('status');
const tokenForm = $('token-form');
const tokenInput = $('token');
const forget = $('forget');
const cards = new Map();
let polling = null;

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

async function api(method, url, body) {
  const headers = { accept: 'application/json' };
  const t = token();
  if (t) headers.authorization = `Bearer ${t}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let json = null;
  try {
    json = await res.json();
  } catch {
    // not JSON: reported by status below
  }
  return { status: res.status, json };
}

/** Until then the poll's "Updated …" line leaves the status as it is (a rewind's outcome stays readable). */
let heldUntil = 0;

function say(text, holdMs = 0) {
  statusLine.textContent = text;
  heldUntil = holdMs > 0 ? Date.now() + holdMs : 0;
}

const HOLD_MS = 30_000;

function askForToken(message) {
  tokenForm.hidden = false;
  forget.hidden = true;
  say(message);
  tokenInput.focus();
}

function age(iso) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min ago`;
}

/** Lines into a <pre>, each a span of its class (no HTML is built from the request's text). */
function renderLines(pre, lines, label) {
  pre.replaceChildren();
  for (const [cls, text] of lines) {
    const span = document.createElement('span');
    span.className = cls;
    span.textContent = `${text}\n`;
    pre.append(span);
  }
  const adds = pre.querySelectorAll('.add').length;
  const dels = pre.querySelectorAll('.del').length;
  pre.setAttribute('aria-label', label ?? (lines.length === 1 && lines[0][0] === 'note' ? lines[0][1] : `Diff: ${adds} line(s) added, ${dels} removed`));
}

/** A unified diff, each line coloured by its first character. */
function diffLines(diff) {
  return diff
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => [line.startsWith('+++') || line.startsWith('---') || line.startsWith('rename ') ? 'file' : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx', line]);
}

/** What a change's box shows: its diff, the content a delete removes, or a sentence when the content stays. */
function changeLines(c) {
  if (c.diff) return diffLines(c.diff);
  if (c.truncated && !c.content) return [['note', '(not shown: the request holds more than a record shows; the approval still binds this change)']];
  if (c.kind === 'directory' && c.content) {
    return [['note', `(the directory moves with everything in it${c.truncated ? '; the list is cut' : ''}:)`], ...c.content.replace(/\n$/, '').split('\n').map((line) => ['ctx', line])];
  }
  if (c.content !== null && c.content !== undefined) {
    if (/^\[binary file, \d+ bytes\]$/.test(c.content)) return [['note', `(${c.content.slice(1, -1)} goes)`]];
    if (c.content === '') return [['note', '(an empty file goes)']];
    return c.content.replace(/\n$/, '').split('\n').map((line) => ['del', `-${line}`]);
  }
  if (c.op === 'move' || c.op === 'copy') return [['note', `(${c.kind === 'directory' ? 'the directory and everything in it' : 'the content'} ${c.op === 'move' ? 'moves' : 'is copied'} as it is)`]];
  if (c.kind === 'directory') return [['note', '(a new, empty directory)']];
  return [['note', '(the content stays as it is)']];
}

function changeTitle(c) {
  return c.to !== undefined ? `${c.from ?? c.path} → ${c.to}` : `${c.path}${c.kind === 'directory' ? '/' : ''}`;
}

/**
 * A command's request (risk `execute`: run_command) as its preview shows it: `$ cd <dir>`, `$ <command line>`,
 * what the command is given (env, stdin, timeout, paths it will see), for a run held for the person what it did
 * (`exit:`, its output after `| `), then the service's own `network:` and `limits:` lines; a held run's changes
 * follow in `changes`. Null for any other request.
 */
function commandOf(a) {
  if (a.risk !== 'execute' || !a.diff_preview) return null;
  const all = a.diff_preview.replace(/\n$/, '').split('\n');
  // Output lines start with '| ', so only the service's own line starts with 'limits: '.
  const end = all.findIndex((l) => l.startsWith('limits: '));
  if ((a.changes ?? []).length > 0 && end < 0) return null;
  const lines = end >= 0 ? all.slice(0, end + 1) : all;
  const last = (key) => (lines.at(-1)?.startsWith(`${key}: `) ? lines.pop().slice(key.length + 2) : null);
  const limits = last('limits');
  const network = last('network');
  const cwd = lines[0]?.startsWith('$ cd ') ? lines[0].slice(5) : (a.path ?? '.');
  const line = lines.find((l, i) => i > 0 && l.startsWith('$ '))?.slice(2) ?? a.summary;
  return { line, cwd, network, limits, lines };
}

/** One box per path the call changes, with its operation; a command shows what it runs; a request without changes (a read) says so. */
function renderChanges(ol, a) {
  ol.replaceChildren();
  const changes = a.changes ?? [];
  const command = commandOf(a);
  const changed = changes.map((c) => ({ op: c.op, title: changeTitle(c), lines: changeLines(c) }));
  const items = command
    ? [{ op: 'run', title: command.cwd, lines: command.lines.map((l) => [l.startsWith('$ ') ? 'file' : 'ctx', l]), label: changes.length > 0 ? 'The command, what it is given and what it did' : 'The command and what it is given' }, ...changed]
    : changes.length > 0
    ? changed
    : [{
        op: a.risk === 'read' ? 'read' : 'call',
        title: a.path ?? '(no path)',
        lines: a.diff_preview ? diffLines(a.diff_preview) : [['note', a.risk === 'read' ? '(this call reads; it changes no file)' : '(this call changes no file)']],
      }];
  renderChangeItems(ol, items);
}

/** "update notes.txt, delete SOUL.md": the request in a few words, for the status line and the history. */
function describe(a) {
  const command = commandOf(a);
  if (command) return `${a.tool}: ${command.line}`;
  const changes = a.changes ?? [];
  if (changes.length === 0) return `${a.tool} ${a.path ?? ''}`.trim();
  return `${a.tool}: ${changes.map((c) => `${c.op} ${changeTitle(c)}`).join(', ')}`;
}

function makeCard(a) {
  const li = $('item').content.firstElementChild.cloneNode(true);
  li.dataset.id = a.id;
  li.querySelector('.tool').textContent = a.tool;
  const more = (a.changes ?? []).length - 1;
  // A command is titled by its command line; where it runs, its network and its limits are facts beside it.
  const command = commandOf(a);
  li.querySelector('.path').textContent = command ? command.line : `${a.path ?? '(no path)'}${more > 0 ? ` and ${more} more` : ''}`;
  if (command) {
    const [cwd, network, limits] = li.querySelectorAll('.command-fact');
    cwd.hidden = false;
    li.querySelector('.cwd').textContent = command.cwd;
    network.hidden = command.network === null;
    li.querySelector('.network').textContent = command.network ?? '';
    li.querySelector('.network').classList.toggle('network-on', command.network?.startsWith('on') ?? false);
    limits.hidden = command.limits === null;
    li.querySelector('.limits').textContent = command.limits ?? '';
  }
  const risk = li.querySelector('.risk');
  risk.textContent = `${a.risk} · ${a.risk_level}`;
  risk.classList.add(`risk-${a.risk_level}`);
  li.querySelector('.caller').textContent = a.caller ?? '(no token)';
  li.querySelector('.project').textContent = a.project ?? '—';
  li.querySelector('.expires').textContent = new Date(a.expires_at).toLocaleTimeString();
  li.querySelector('.summary').textContent = a.summary;
  renderChanges(li.querySelector('.changes'), a);
  li.querySelector('.truncated').hidden = !(a.diff_truncated || (a.changes ?? []).some((c) => c.truncated));
  const reasonId = `reason-${a.id}`;
  li.querySelector('.reason').id = reasonId;
  li.querySelector('.reason-label').htmlFor = reasonId;
  const title = `${a.tool} ${command ? command.line : (a.path ?? '')}`.trim();
  li.querySelector('.approve').setAttribute('aria-label', `Approve ${title}`);
  li.querySelector('.reject').setAttribute('aria-label', `Reject ${title}`);
  li.querySelector('.approve').addEventListener('click', () => decide(li, a, 'approve'));
  li.querySelector('.reject').addEventListener('click', () => decide(li, a, 'reject'));
  return li;
}

// --- Decisions made in this tab (kept for the tab, like the token) ------------------------------------------

const HISTORY_KEY = 'toolgate.approval-history';
const MAX_HISTORY = 100;

function history() {
  try {
    return JSON.parse(sessionStorage.getItem(HISTORY_KEY) ?? '[]');
  } catch {
    return [];
  }
}

function remember(entry) {
  const all = [entry, ...history().filter((e) => e.id !== entry.id)].slice(0, MAX_HISTORY);
  sessionStorage.setItem(HISTORY_KEY, JSON.stringify(all));
  renderHistory();
}

const VERDICTS = { approved: 'Approved', rejected: 'Rejected', expired: 'Expired', used: 'Approved and used' };

function renderHistory() {
  const ol = $('history');
  ol.replaceChildren();
  for (const e of history()) {
    const li = document.createElement('li');
    li.dataset.decided = e.id;
    const verdict = document.createElement('span');
    verdict.className = `verdict verdict-${e.status}`;
    verdict.textContent = VERDICTS[e.status] ?? e.status;
    const where = e.here ? '' : ` elsewhere${e.by ? ` by ${e.by}` : ''}`;
    li.append(verdict, `${where}: ${e.what}${e.reason ? ` (reason: ${e.reason})` : ''} · ${new Date(e.at).toLocaleTimeString()}`);
    ol.append(li);
  }
  $('history-empty').hidden = ol.children.length > 0;
}

// --- Turns: what agents changed, and taking it back (list_checkpoints and rewind, docs/api.md) ----------------

const TURNS_PAGE = 20;
const TURNS_REFRESH_MS = 10_000;
const turnsList = $('turns');
let turnsBefore = null;
let turnsLoadedAt = 0;

function callTool(name, body) {
  return api('POST', `/v1/tools/${encodeURIComponent(name)}`, body);
}

function turnName(cp) {
  if (cp.rewound_to) return cp.turn ? `Turn ${cp.turn}: a rewind` : 'A rewind';
  return cp.turn ? `Turn ${cp.turn}` : `A call without a turn (${cp.tools.join(', ')})`;
}

/** One box per change (a request's, a turn's files, a rewind's preview): its operation, path and lines. */
function renderChangeItems(ol, items) {
  ol.replaceChildren();
  for (const item of items) {
    const li = $('change').content.firstElementChild.cloneNode(true);
    const op = li.querySelector('.op');
    op.textContent = item.op;
    op.classList.add(`op-${item.op}`);
    li.querySelector('.change-path').textContent = item.title;
    renderLines(li.querySelector('.diff'), item.lines, item.label);
    ol.append(li);
  }
}

/** A file of a turn: its diff when the service still has both sides, else what is known of it. */
function turnFileLines(f) {
  if (f.diff) return diffLines(f.diff);
  if (f.kind === 'directory') return [['note', f.op === 'delete' ? '(the directory was removed)' : '(a directory)']];
  return [['note', `(${f.lines_added} line(s) added, ${f.lines_removed} removed; the content is no longer kept to show)`]];
}

function makeTurn(cp) {
  const li = $('turn').content.firstElementChild.cloneNode(true);
  li.dataset.checkpoint = cp.id;
  li.querySelector('.turn-name').textContent = turnName(cp);
  const lines = li.querySelector('.turn-lines');
  const plus = document.createElement('span');
  plus.className = 'plus';
  plus.textContent = `+${cp.lines_added}`;
  const minus = document.createElement('span');
  minus.className = 'minus';
  minus.textContent = `−${cp.lines_removed}`;
  lines.append(plus, ' ', minus);
  lines.setAttribute('aria-label', `${cp.lines_added} line(s) added, ${cp.lines_removed} removed`);
  li.querySelector('.when').textContent = new Date(cp.created_at).toLocaleString();
  li.querySelector('.actor').textContent = cp.actors.map((a) => a ?? '(no token)').join(', ');
  li.querySelector('.tools').textContent = cp.tools.join(', ');
  const files = cp.files.map((f) => ({ op: f.op, title: f.to !== undefined ? `${f.path} → ${f.to}` : `${f.path}${f.kind === 'directory' ? '/' : ''}`, lines: turnFileLines(f) }));
  if (cp.files_count > cp.files.length) files.push({ op: 'more', title: `and ${cp.files_count - cp.files.length} more`, lines: [['note', '(not listed)']] });
  renderChangeItems(li.querySelector('.turn-files'), files);
  const button = li.querySelector('.preview-rewind');
  button.setAttribute('aria-label', `Rewind to before ${turnName(cp)}`);
  button.addEventListener('click', () => void previewRewind(li, cp));
  li.querySelector('.cancel-rewind').addEventListener('click', () => closePreview(li, `Rewind to before ${turnName(cp)} cancelled; nothing changed.`));
  li.querySelector('.confirm-rewind').addEventListener('click', () => void confirmRewind(li, cp));
  return li;
}

/** The turns, newest first; a refresh waits while a person looks at a preview (the list would move under them). */
async function loadTurns(more = false) {
  if (!more && turnsList.querySelector('.rewind-preview:not([hidden])')) return;
  turnsLoadedAt = Date.now();
  const r = await callTool('list_checkpoints', { limit: TURNS_PAGE, diffs: true, ...(more && turnsBefore && { before: turnsBefore }) });
  if (r.status !== 200) {
    $('turns-empty').hidden = false;
    $('turns-empty').textContent = `Turns cannot be shown: ${r.json?.error?.message ?? `HTTP ${r.status}`}`;
    return;
  }
  const d = r.json.data;
  if (!more) turnsList.replaceChildren();
  for (const cp of d.checkpoints) turnsList.append(makeTurn(cp));
  turnsBefore = d.next_before;
  $('turns-more').hidden = !d.next_before;
  $('turns-empty').textContent = 'No changes recorded yet.';
  $('turns-empty').hidden = turnsList.children.length > 0;
  $('turns-count').textContent = turnsList.children.length > 0 ? `(${turnsList.children.length}${d.next_before ? '+' : ''})` : '';
  const pruned = $('turns-pruned');
  pruned.hidden = d.pruned.count === 0;
  pruned.textContent = d.pruned.count === 0 ? '' : `${d.pruned.count} older checkpoint(s) were pruned (up to ${new Date(d.pruned.before).toLocaleString()}); they can no longer be rewound.`;
}

function setBusy(li, busy) {
  li.querySelectorAll('button').forEach((b) => (b.disabled = busy));
}

function closePreview(li, message) {
  li.querySelector('.rewind-preview').hidden = true;
  li.preview = null;
  li.approvalId = null;
  setBusy(li, false);
  if (message) say(message, HOLD_MS);
  li.querySelector('.preview-rewind').focus();
}

/** The identity of a rewind's changes: what the confirmation must still make (else the person sees the new one). */
function changesKey(changes) {
  return JSON.stringify(changes.map((c) => [c.op, c.path, c.to ?? null, c.sha256_before, c.sha256_after]));
}

function showPreview(li, cp, d) {
  li.preview = d;
  const panel = li.querySelector('.rewind-preview');
  const n = d.changes.length;
  li.querySelector('.rewind-summary').textContent =
    n === 0
      ? `Nothing to put back: every file is already as it was before ${turnName(cp)}.`
      : `Rewinding puts back ${n} change(s) made at or after ${turnName(cp)} (${d.checkpoints_rewound} checkpoint(s), +${d.lines_added} −${d.lines_removed}):`;
  renderChangeItems(li.querySelector('.rewind-changes'), d.changes.map((c) => ({ op: c.op, title: changeTitle(c), lines: changeLines(c) })));
  li.querySelector('.confirm-rewind').hidden = n === 0;
  panel.hidden = false;
  setBusy(li, false);
  li.querySelector('.preview-rewind').disabled = true;
  (n === 0 ? li.querySelector('.cancel-rewind') : li.querySelector('.confirm-rewind')).focus();
}

async function previewRewind(li, cp) {
  setBusy(li, true);
  const r = await callTool('rewind', { checkpoint: cp.id, dry_run: true });
  if (r.status !== 200) {
    setBusy(li, false);
    return say(`Could not preview the rewind: ${r.json?.error?.message ?? `HTTP ${r.status}`}`, HOLD_MS);
  }
  showPreview(li, cp, r.json.data);
  say(`Preview of the rewind to before ${turnName(cp)}: nothing changes until you confirm.`, HOLD_MS);
}

async function confirmRewind(li, cp) {
  setBusy(li, true);
  const force = li.querySelector('.force').checked;
  // The project may have moved on since the preview: a rewind that would now make other changes is shown again.
  if (!li.approvalId) {
    const again = await callTool('rewind', { checkpoint: cp.id, dry_run: true, force });
    if (again.status === 200 && changesKey(again.json.data.changes) !== changesKey(li.preview.changes)) {
      showPreview(li, cp, again.json.data);
      return say('The project changed since the preview; here is what the rewind would do now. Confirm again to go ahead.', HOLD_MS);
    }
  }
  const r = await callTool('rewind', { checkpoint: cp.id, force, ...(li.approvalId && { approval_id: li.approvalId }) });
  if (r.status === 200) {
    li.approvalId = null;
    li.querySelector('.rewind-preview').hidden = true;
    say(`Rewound to before ${turnName(cp)}: ${r.json.text}`, HOLD_MS);
    await loadTurns();
    return;
  }
  if (r.status === 202) {
    li.approvalId = r.json.data.approval.id;
    setBusy(li, false);
    return say(`The rewind waits for approval ${li.approvalId} (the policy asks): decide it under Pending requests, then confirm the rewind again.`, HOLD_MS);
  }
  setBusy(li, false);
  li.querySelector('.preview-rewind').disabled = true;
  say(`Could not rewind: ${r.json?.error?.message ?? `HTTP ${r.status}`}${r.json?.error?.code === 'CONFLICT' ? ' Tick "force" to overwrite those files, or cancel.' : ''}`, HOLD_MS);
}

$('turns-more').addEventListener('click', () => void loadTurns(true));

/** Takes a card off the list, keeping keyboard focus in the page (the next card, else the history). */
function dropCard(li, id) {
  const next = li.nextElementSibling ?? li.previousElementSibling;
  const hadFocus = li.contains(document.activeElement);
  li.remove();
  cards.delete(id);
  updateCount();
  if (!hadFocus) return;
  const target = next?.querySelector('.reason') ?? $('history-title');
  if (target === $('history-title')) target.tabIndex = -1;
  target.focus();
}

async function decide(li, a, decision) {
  const buttons = li.querySelectorAll('button');
  buttons.forEach((b) => (b.disabled = true));
  li.deciding = true; // the poll leaves it to this answer
  const reason = li.querySelector('.reason').value.trim();
  const r = await api('POST', `/v1/approvals/${encodeURIComponent(a.id)}/${decision}`, reason ? { reason } : {});
  if (r.status === 200) {
    const status = decision === 'approve' ? 'approved' : 'rejected';
    const next = decision === 'approve' ? 'The agent may now repeat the call.' : 'The agent learns it (with the reason) when it repeats the call.';
    say(`${VERDICTS[status]}: ${describe(a)}. ${next}`);
    remember({ id: a.id, status, here: true, what: describe(a), reason: reason || null, at: new Date().toISOString() });
    dropCard(li, a.id);
    return;
  }
  li.deciding = false;
  if (r.status === 401) return askForToken('The token was refused; paste it again.');
  buttons.forEach((b) => (b.disabled = false));
  say(`Could not ${decision}: ${r.json?.error?.message ?? `HTTP ${r.status}`}`);
}

/** A card whose request left the pending list without a decision here: what became of it goes into the history. */
async function settledElsewhere(li, a) {
  dropCard(li, a.id);
  let record = null;
  try {
    const r = await api('GET', `/v1/approvals/${encodeURIComponent(a.id)}`);
    if (r.status === 200) record = r.json.approval;
  } catch {
    // unknown: recorded as gone
  }
  const status = record?.status ?? 'expired';
  remember({ id: a.id, status, here: false, by: record?.decided_by ?? null, what: describe(a), reason: record?.reason ?? null, at: record?.decided_at ?? new Date().toISOString() });
}

function updateCount() {
  $('count').textContent = cards.size > 0 ? `(${cards.size})` : '';
  $('empty').hidden = cards.size > 0;
}

async function poll() {
  let r;
  try {
    r = await api('GET', '/v1/approvals?status=pending');
  } catch {
    say('toolgate is not reachable; retrying…');
    return;
  }
  if (r.status === 401) return askForToken(token() ? 'The token was refused; paste a valid one.' : 'Paste your approver token to see the requests.');
  if (r.status !== 200) return say(r.json?.error?.message ?? `HTTP ${r.status}`);
  tokenForm.hidden = true;
  forget.hidden = !token();
  const seen = new Set();
  for (const a of r.json.approvals) {
    seen.add(a.id);
    let li = cards.get(a.id);
    if (!li) {
      li = makeCard(a);
      li.request = a;
      cards.set(a.id, li);
      list.append(li);
    }
    li.querySelector('.age').textContent = age(a.created_at);
  }
  // Decided elsewhere (another approver, another replica) or expired: gone from the list, named in the history.
  for (const [id, li] of cards) {
    if (!seen.has(id) && !li.deciding && !li.contains(document.activeElement)) void settledElsewhere(li, li.request);
  }
  updateCount();
  if (Date.now() - turnsLoadedAt >= TURNS_REFRESH_MS) await loadTurns();
  if (Date.now() >= heldUntil) say(`Updated ${new Date().toLocaleTimeString()}. ${cards.size} pending.`);
}

function start() {
  if (polling) clearInterval(polling);
  void poll();
  polling = setInterval(() => void poll(), POLL_MS);
}

tokenForm.addEventListener('submit', (e) => {
  e.preventDefault();
  const t = tokenInput.value.trim();
  if (!t) return;
  sessionStorage.setItem(TOKEN_KEY, t);
  tokenInput.value = '';
  start();
});

forget.addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(HISTORY_KEY);
  renderHistory();
  for (const li of cards.values()) li.remove();
  cards.clear();
  updateCount();
  askForToken('Token forgotten. Paste a token to continue.');
});

renderHistory();
start();

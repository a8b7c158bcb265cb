// The approval console: polls /v1/approvals?status=pending with the approver's token (asked once, kept in
// sessionStorage for this tab), shows each request with its diff, and approves or rejects with a reason.
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

function say(text) {
  statusLine.textContent = text;
}

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

/** The diff as lines, each coloured by its first character (no HTML is built from the diff's text). */
function renderDiff(pre, diff) {
  pre.replaceChildren();
  if (!diff) {
    pre.textContent = '(no diff: this call does not change file content)';
    return;
  }
  for (const line of diff.replace(/\n$/, '').split('\n')) {
    const span = document.createElement('span');
    span.className = line.startsWith('+++') || line.startsWith('---') ? 'file' : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
    span.textContent = `${line}\n`;
    pre.append(span);
  }
  const adds = pre.querySelectorAll('.add').length;
  const dels = pre.querySelectorAll('.del').length;
  pre.setAttribute('aria-label', `Diff: ${adds} line(s) added, ${dels} removed`);
}

function makeCard(a) {
  const li = $('item').content.firstElementChild.cloneNode(true);
  li.dataset.id = a.id;
  li.querySelector('.tool').textContent = a.tool;
  li.querySelector('.path').textContent = a.path ?? '(no path)';
  const risk = li.querySelector('.risk');
  risk.textContent = `${a.risk} · ${a.risk_level}`;
  risk.classList.add(`risk-${a.risk_level}`);
  li.querySelector('.caller').textContent = a.caller ?? '(no token)';
  li.querySelector('.project').textContent = a.project ?? '—';
  li.querySelector('.expires').textContent = new Date(a.expires_at).toLocaleTimeString();
  li.querySelector('.summary').textContent = a.summary;
  renderDiff(li.querySelector('.diff'), a.diff_preview);
  li.querySelector('.truncated').hidden = !a.diff_truncated;
  const reasonId = `reason-${a.id}`;
  li.querySelector('.reason').id = reasonId;
  li.querySelector('.reason-label').htmlFor = reasonId;
  const title = `${a.tool} ${a.path ?? ''}`.trim();
  li.querySelector('.approve').setAttribute('aria-label', `Approve ${title}`);
  li.querySelector('.reject').setAttribute('aria-label', `Reject ${title}`);
  li.querySelector('.approve').addEventListener('click', () => decide(li, a, 'approve'));
  li.querySelector('.reject').addEventListener('click', () => decide(li, a, 'reject'));
  return li;
}

async function decide(li, a, decision) {
  const buttons = li.querySelectorAll('button');
  buttons.forEach((b) => (b.disabled = true));
  const reason = li.querySelector('.reason').value.trim();
  const r = await api('POST', `/v1/approvals/${encodeURIComponent(a.id)}/${decision}`, reason ? { reason } : {});
  if (r.status === 200) {
    say(`${decision === 'approve' ? 'Approved' : 'Rejected'}: ${a.tool} ${a.path ?? ''}.`);
    li.remove();
    cards.delete(a.id);
    updateCount();
    return;
  }
  if (r.status === 401) return askForToken('The token was refused; paste it again.');
  buttons.forEach((b) => (b.disabled = false));
  say(`Could not ${decision}: ${r.json?.error?.message ?? `HTTP ${r.status}`}`);
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
      cards.set(a.id, li);
      list.append(li);
    }
    li.querySelector('.age').textContent = age(a.created_at);
  }
  // Decided elsewhere (another approver, another replica) or expired: gone from the list.
  for (const [id, li] of cards) {
    if (!seen.has(id) && !li.contains(document.activeElement)) {
      li.remove();
      cards.delete(id);
    }
  }
  updateCount();
  say(`Updated ${new Date().toLocaleTimeString()}. ${cards.size} pending.`);
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
  for (const li of cards.values()) li.remove();
  cards.clear();
  updateCount();
  askForToken('Token forgotten. Paste a token to continue.');
});

start();

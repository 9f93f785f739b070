import assert from 'node:assert/strict';
import { test } from 'node:test';
import { candidateStatuses, type InboxItem } from '../logic/inbox';
import { childrenOf, inboxTree, nodeId } from '../logic/inboxView';
import { changeFacts, describeTarget, pickerRows, resolveTarget, ROW_GONE, rowAllows, rowNow, targetOfItem, targetProblem, undoConfirmation } from '../logic/targets';

const ROOT = 'file:///ws';
const A: InboxItem = { kind: 'proposal', id: 'mem_a', title: 'Lint before pushing', uri: `${ROOT}/.memzoi/proposals/pending/mem_a.md`, canApply: true };
const B: InboxItem = { kind: 'proposal', id: 'mem_b', title: 'Cache keys', uri: `${ROOT}/.memzoi/proposals/pending/mem_b.md`, canApply: false,
  blockers: [{ code: 'scope_project_mismatch', message: 'no project id' }] };
const R: InboxItem = { kind: 'resident', id: 'cand_1234567890abcdef', title: 'Tabs only', uri: `${ROOT}/.zuno/RULES.md`, status: 'pending', decidable: true };
const U: InboxItem = { kind: 'uncertain', id: 'chg_1', title: 'uncertain', uri: `${ROOT}/.memzoi/records/x.md`, changeId: 'chg_1' };

test('an inbox tree node resolves to exactly its own row (the bug: handlers got the wrapper node)', () => {
  const [rowA, rowB] = inboxTree([A, B, R]);
  assert.equal(rowA.type, 'row');
  assert.equal(resolveTarget(rowA)?.uri, A.uri);
  assert.equal(resolveTarget(rowB)?.uri, B.uri);
  assert.equal(resolveTarget(rowA)?.title, 'Lint before pushing');
  assert.equal(resolveTarget(rowA)?.kind, 'proposal');
  // a blocker node under a blocked row names its parent packet
  const [reason] = childrenOf(rowB);
  assert.equal(resolveTarget(reason)?.uri, B.uri);
});

test('resident rows in their section carry the candidate id and the resident file', () => {
  const section = inboxTree([A, R]).find((n) => n.type === 'section');
  assert.ok(section);
  const [row] = childrenOf(section);
  const t = resolveTarget(row);
  assert.equal(t?.candidateId, R.id);
  assert.equal(t?.uri, R.uri);
  assert.equal(t?.kind, 'resident');
  assert.equal(resolveTarget(R)?.candidateId, R.id);
});

test('server arguments, URIs and uncertain rows give their explicit target', () => {
  assert.deepEqual(resolveTarget({ uri: A.uri }), { uri: A.uri });
  assert.deepEqual(resolveTarget([{ uri: R.uri, candidate_id: 'c1' }]), { uri: R.uri, candidateId: 'c1' });
  assert.deepEqual(resolveTarget({ uri: R.uri, candidateId: 'c2' }), { uri: R.uri, candidateId: 'c2' });
  assert.equal(resolveTarget({ change_id: 'chg_9' })?.changeId, 'chg_9');
  assert.equal(resolveTarget(A.uri)?.uri, A.uri);
  const uriLike = { scheme: 'file', path: '/ws/x.md', toString: () => 'file:///ws/x.md' };
  assert.equal(resolveTarget(uriLike)?.uri, 'file:///ws/x.md');
  assert.equal(resolveTarget({ type: 'row', item: U })?.changeId, 'chg_1');
});

test('no argument is no target (the command then asks with a picker, never the active editor)', () => {
  for (const none of [undefined, null, [], {}, 'not a uri', 42, { operation: 'apply' }]) {
    assert.equal(resolveTarget(none), undefined, JSON.stringify(none));
  }
});

test('a target of the wrong kind is refused, never replaced', () => {
  assert.equal(targetProblem({ uri: A.uri }, 'proposal', 'Apply'), undefined);
  assert.match(targetProblem({ uri: `${ROOT}/.memzoi/records/x.md` }, 'proposal', 'Apply') ?? '', /not one/);
  assert.match(targetProblem(resolveTarget(R) ?? {}, 'proposal', 'Apply') ?? '', /pending proposal/);
  assert.equal(targetProblem(resolveTarget(R) ?? {}, 'resident', 'Approve'), undefined);
  assert.match(targetProblem({ uri: R.uri }, 'resident', 'Approve') ?? '', /candidate/);
  assert.match(targetProblem({}, 'change', 'Undo') ?? '', /change/);
});

test('confirmations name the target: title and path; undo: operation, files and time', () => {
  assert.equal(describeTarget(resolveTarget(A) ?? {}, [ROOT]), '“Lint before pushing” (.memzoi/proposals/pending/mem_a.md)');
  assert.equal(describeTarget({ uri: `${ROOT}/.memzoi/records/x.md` }, [ROOT]), '.memzoi/records/x.md');
  const history = [{ change_id: 'chg_1', operation: 'apply', applied_at: '2026-12-04T23:01:02.123Z',
    files: [{ path: '.memzoi/records/lint.md' }, { path: '.memzoi/proposals/pending/mem_a.md' }] }];
  const facts = changeFacts(history, 'chg_1');
  assert.deepEqual(facts, { change_id: 'chg_1', operation: 'apply', time: '2026-12-04 23:01:02',
    files: ['.memzoi/records/lint.md', '.memzoi/proposals/pending/mem_a.md'] });
  const text = undoConfirmation(facts);
  assert.match(text, /^Undo the apply of 2026-12-04 23:01:02: \.memzoi\/records\/lint\.md, /);
  assert.deepEqual(changeFacts(undefined, 'chg_2'), { change_id: 'chg_2' });
});

test('the picker lists the inbox rows, the active editor first and marked, nothing chosen for the user', () => {
  const rows = pickerRows([A, B, R], 'proposal', B.uri);
  assert.deepEqual(rows.map((r) => [r.item.id, r.active]), [['mem_b', true], ['mem_a', false]]);
  assert.deepEqual(pickerRows([A, B], 'proposal').map((r) => r.active), [false, false]);
  assert.deepEqual(pickerRows([A, R], 'resident').map((r) => r.item.id), [R.id]);
});

test('tree nodes have stable, distinct ids, so an inline button resolves to its own row after a refresh', () => {
  const first = inboxTree([A, B, R, U]);
  const again = inboxTree([{ ...A }, { ...B }, { ...R }, { ...U }]);
  const ids = (nodes: ReturnType<typeof inboxTree>): string[] => nodes.flatMap((n) => [nodeId(n), ...childrenOf(n).map(nodeId)]);
  assert.deepEqual(ids(first), ids(again));
  assert.equal(new Set(ids(first)).size, ids(first).length);
  assert.notEqual(nodeId(first[0]), nodeId(first[1]));
});

// D3 (newuser5): a row's button clicked as the candidate was decided elsewhere opened "approve which
// resident-memory candidate?" listing others, one already applied. A row's button now acts on that row as the
// inbox lists it now, or says why not; the picker lists only the candidates that accept the action.
const APPLIED: InboxItem = { kind: 'resident', id: 'cand_applied', title: 'Terse commits', uri: `${ROOT}/.zuno/RULES.md`, status: 'applied', decidable: false, undoable: true };
const OTHER: InboxItem = { kind: 'resident', id: 'cand_other', title: 'Use nextest', uri: `${ROOT}/.zuno/RULES.md`, status: 'pending', decidable: true };
const STUCK: InboxItem = { kind: 'resident', id: 'cand_stuck', title: 'Stuck', uri: `${ROOT}/.zuno/RULES.md`, status: 'uncertain', decidable: false };
const problemOf = (v: ReturnType<typeof rowNow>): string | undefined => ('problem' in v ? v.problem : undefined);

test('a button whose row the tree dropped under the click says so and acts on nothing', () => {
  const v = rowNow(undefined, [OTHER, APPLIED], 'resident', 'approve');
  assert.equal(problemOf(v), ROW_GONE);
  assert.ok(!('row' in v));
});

test('a row decided elsewhere is named with its state, never replaced by another row', () => {
  const [staleNode] = childrenOf(inboxTree([R]).find((n) => n.type === 'section')!);
  // rejected elsewhere: gone from the fresh listing, its status known from the listing
  const gone = rowNow(resolveTarget(staleNode), [OTHER, APPLIED], 'resident', 'approve', new Map([[R.id, 'rejected']]));
  assert.equal(problemOf(gone), `candidate ${R.id} was decided elsewhere: rejected; nothing was done.`);
  // status unknown: still no substitute
  assert.match(problemOf(rowNow(resolveTarget(staleNode), [OTHER], 'resident', 'reject')) ?? '', /decided elsewhere: it is no longer in the Memory Inbox/);
  // approved elsewhere: listed again, as applied (undo only)
  const applied = rowNow(resolveTarget(staleNode), [{ ...R, status: 'applied', decidable: false, undoable: true }], 'resident', 'approve');
  assert.equal(problemOf(applied), `candidate ${R.id} was decided elsewhere: applied; it cannot be approved now. Nothing was done.`);
});

test('a row still listed is acted on as listed now (the fresh row, not the drawn one)', () => {
  const fresh = { ...R, title: 'Tabs only (fresh)' };
  const v = rowNow(targetOfItem(R), [OTHER, fresh], 'resident', 'approve');
  assert.ok('row' in v);
  assert.equal(v.row, fresh);
  const p = rowNow(resolveTarget(inboxTree([A])[0]), [B, A], 'proposal', 'apply');
  assert.ok('row' in p && p.row === A);
  assert.match(problemOf(rowNow(targetOfItem(A), [B], 'proposal', 'reject')) ?? '', /^proposal “Lint before pushing” .* was decided elsewhere/);
  // a packet row given to a resident button is not a candidate: refused, not swapped
  assert.equal(problemOf(rowNow(targetOfItem(A), [R], 'resident', 'approve')), ROW_GONE);
});

test('each row kind accepts only what the server says it accepts now', () => {
  assert.ok(rowAllows(OTHER, 'approve') && rowAllows(OTHER, 'reject') && rowAllows(OTHER, 'edit'));
  assert.ok(!rowAllows(APPLIED, 'approve') && rowAllows(APPLIED, 'undo'));
  assert.ok(!rowAllows(STUCK, 'approve') && rowAllows(STUCK, 'recover') && !rowAllows(OTHER, 'recover'));
  const cp: InboxItem = { kind: 'checkpoint', id: 'cp_1', title: 'cp', uri: `${ROOT}/.memzoi`, actions: ['close'] };
  assert.ok(rowAllows(cp, 'close') && !rowAllows(cp, 'continue'));
  assert.match(problemOf(rowNow(targetOfItem(cp), [cp], 'checkpoint', 'continue')) ?? '', /checkpoint cp_1 was decided elsewhere: it accepts close now/);
});

test('the approve picker lists only pending or failed candidates; the undo picker only the undoable one', () => {
  const failed = { ...OTHER, id: 'cand_failed', status: 'failed', decidable: true };
  const items = [A, R, OTHER, APPLIED, STUCK, failed];
  assert.deepEqual(pickerRows(items, 'resident', undefined, 'approve').map((r) => r.item.id), [R.id, OTHER.id, failed.id]);
  assert.deepEqual(pickerRows(items, 'resident', undefined, 'undo').map((r) => r.item.id), [APPLIED.id]);
  assert.deepEqual(pickerRows(items, 'resident', undefined, 'recover').map((r) => r.item.id), [STUCK.id]);
});

test('property: a row button acts on its own row or on nothing, whatever the fresh listing holds', () => {
  const pool = [R, OTHER, APPLIED, STUCK, A, B, U];
  const verbs = ['approve', 'reject', 'undo', 'recover', 'apply', 'open'] as const;
  for (let mask = 0; mask < 1 << pool.length; mask++) {
    const fresh = pool.filter((_, i) => mask & (1 << i));
    for (const clicked of pool) {
      for (const verb of verbs) {
        const v = rowNow(targetOfItem(clicked), fresh, clicked.kind, verb);
        if ('row' in v) assert.equal(v.row.id, clicked.id);
        else assert.match(v.problem, /nothing was done/i);
      }
    }
  }
});

test('the resident listing gives every candidate status, listed as a row or not', () => {
  const statuses = candidateStatuses({ candidates: [{ id: 'a', status: 'rejected' }, { id: 'b', status: 'pending' }, { id: 3 }, null] });
  assert.deepEqual([...statuses], [['a', 'rejected'], ['b', 'pending']]);
  assert.equal(candidateStatuses(undefined).size, 0);
});

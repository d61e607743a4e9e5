/**
 * The local hub speaks AppSync Events' protocol and enforces the `jobs` channel rules: a subscriber receives what
 * is published to its own job's channel; another user's channel, a forged or expired token, a malformed channel
 * and a wildcard over other users are refused with the documented error types; admins may watch any job;
 * clients may not publish; unsigned HTTP publishes are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLocalJwtKey, signLocalToken } from '../../lib/api/local-jwt.ts';
import { LOCAL_TOKEN_AUDIENCE } from '../../lib/dev/local-runtime/local-auth.ts';
import { ownerChannels } from '../../lib/realtime/channel.ts';
import { ownerSegmentOfSubjectSync } from '../../lib/realtime/server-channel.ts';
import { CREDENTIALS, REGION, channelFor, newJobId, rawSocket, startTestHub, textPush, type TestHub } from './realtime-fixture.ts';
import { createEventsSigner } from '../../lib/realtime/sigv4.ts';

let t: TestHub;
let host: string;
beforeAll(async () => {
  t = await startTestHub({ keepAliveIntervalMs: 50 });
  host = new URL(t.hub.httpEndpoint).host;
});
afterAll(() => t.stop());

async function connected(sub: string, claims = {}) {
  const socket = await rawSocket(t.hub.realtimeUrl, await t.token(sub, claims), host);
  socket.send({ type: 'connection_init' });
  await socket.next((m) => m.type === 'connection_ack');
  return socket;
}

async function subscribe(socket: Awaited<ReturnType<typeof connected>>, channel: string, token: string) {
  const id = crypto.randomUUID();
  socket.send({ type: 'subscribe', id, channel, authorization: { host, Authorization: token } });
  return socket.next((m) => m.id === id && m.type !== 'data');
}

describe('connection', () => {
  it('acknowledges connection_init with the keep-alive window and then sends ka', async () => {
    const socket = await rawSocket(t.hub.realtimeUrl, await t.token('alice'), host);
    expect(socket.ws.protocol).toBe('aws-appsync-event-ws');
    socket.send({ type: 'connection_init' });
    expect(await socket.next((m) => m.type === 'connection_ack')).toEqual({ type: 'connection_ack', connectionTimeoutMs: 300_000 });
    expect(await socket.next((m) => m.type === 'ka')).toEqual({ type: 'ka' });
    socket.ws.close();
  });

  it.each([
    ['a forged token (another key)', async () => signLocalToken(generateLocalJwtKey(), { sub: 'alice', ...LOCAL_TOKEN_AUDIENCE })],
    ['an expired token', async () => t.token('alice', { expiresIn: -60 })],
    ['no token', async () => undefined],
  ])('refuses %s with connection_error UnauthorizedException and closes', async (_, token) => {
    const socket = await rawSocket(t.hub.realtimeUrl, await token(), host);
    socket.send({ type: 'connection_init' });
    const refusal = await socket.next();
    expect(refusal).toMatchObject({ type: 'connection_error', errors: [{ errorType: 'UnauthorizedException' }] });
    await socket.closed;
  });

  it('answers a message it cannot read with error, and an unknown type with UnsupportedOperation', async () => {
    const socket = await connected('alice');
    // Keep-alives (every 50 ms here) may come first.
    socket.ws.send('not json');
    expect(await socket.next((m) => m.type !== 'ka')).toMatchObject({ type: 'error', errors: [{ errorType: 'BadRequestException' }] });
    socket.send({ type: 'start', id: 'x' });
    expect(await socket.next((m) => m.type !== 'ka')).toMatchObject({ type: 'error', id: 'x', errors: [{ errorType: 'UnsupportedOperation' }] });
    socket.ws.close();
  });
});

describe('subscribe', () => {
  it('delivers every event published to the subscriber’s own job channel, as data with the event as JSON text', async () => {
    const jobId = newJobId();
    const socket = await connected('alice');
    expect(await subscribe(socket, channelFor('alice', jobId), await t.token('alice'))).toMatchObject({ type: 'subscribe_success' });
    const publisher = t.publisher();
    publisher.publish(textPush('alice', jobId, 1, 2));
    const data = await socket.next((m) => m.type === 'data');
    expect(JSON.parse(data.event)).toEqual(textPush('alice', jobId, 1, 2));
    await publisher.flush(5_000);
    expect(publisher.stats()).toMatchObject({ published: 1, failed: 0, dropped: 0 });
    socket.ws.close();
  });

  it("refuses another user's channel with UnauthorizedException", async () => {
    const socket = await connected('bob');
    const answer = await subscribe(socket, channelFor('alice', newJobId()), await t.token('bob'));
    expect(answer).toMatchObject({ type: 'subscribe_error', errors: [{ errorType: 'UnauthorizedException' }] });
    socket.ws.close();
  });

  it("lets an admin watch any user's job, and a user all of their own jobs (/jobs/<own>/*)", async () => {
    const jobId = newJobId();
    const admin = await connected('root', { admin: true });
    expect(await subscribe(admin, channelFor('alice', jobId), await t.token('root', { admin: true }))).toMatchObject({ type: 'subscribe_success' });
    const alice = await connected('alice');
    expect(await subscribe(alice, ownerChannels(ownerSegmentOfSubjectSync('alice')), await t.token('alice'))).toMatchObject({ type: 'subscribe_success' });
    const publisher = t.publisher();
    publisher.publish(textPush('alice', jobId, 1));
    for (const socket of [admin, alice]) expect(JSON.parse((await socket.next((m) => m.type === 'data')).event).jobId).toBe(jobId);
    admin.ws.close();
    alice.ws.close();
  });

  it.each([
    ['a forged subscribe token', async () => signLocalToken(generateLocalJwtKey(), { sub: 'alice', ...LOCAL_TOKEN_AUDIENCE })],
    ['an expired subscribe token', async () => t.token('alice', { expiresIn: -60 })],
    ['a token for another audience', async () => signLocalToken(t.key, { sub: 'alice', issuer: LOCAL_TOKEN_AUDIENCE.issuer, audience: 'other-api' })],
  ])('refuses %s with UnauthorizedException', async (_, token) => {
    const socket = await connected('alice');
    const answer = await subscribe(socket, channelFor('alice', newJobId()), await token());
    expect(answer).toMatchObject({ type: 'subscribe_error', errors: [{ errorType: 'UnauthorizedException' }] });
    socket.ws.close();
  });

  const own = ownerSegmentOfSubjectSync('alice');
  it.each([
    ['a segment with a space', `/jobs/${own}/a b`, 'BadRequestException'],
    ['an empty segment', `/jobs//${newJobId()}`, 'BadRequestException'],
    ['six segments', `/jobs/${own}/a/b/c/d`, 'BadRequestException'],
    ['a wildcard inside the path', `/jobs/*/${newJobId()}`, 'BadRequestException'],
    ['another namespace', `/default/${own}/${newJobId()}`, 'BadRequestException'],
    ['a channel that is not a job id', `/jobs/${own}/not-a-job`, 'UnauthorizedException'],
    ['too shallow', `/jobs/${own}`, 'UnauthorizedException'],
    ['too deep', `/jobs/${own}/${newJobId()}/x`, 'UnauthorizedException'],
    ['the /jobs/* firehose', '/jobs/*', 'UnauthorizedException'],
    ["a wildcard over another user's jobs", `/jobs/${ownerSegmentOfSubjectSync('bob')}/*`, 'UnauthorizedException'],
    ['the raw subject as owner segment', `/jobs/alice/${newJobId()}`, 'UnauthorizedException'],
  ])('refuses %s (%s) with %s', async (_, channel, errorType) => {
    const socket = await connected('alice');
    expect(await subscribe(socket, channel, await t.token('alice'))).toMatchObject({ type: 'subscribe_error', errors: [{ errorType }] });
    socket.ws.close();
  });

  it('refuses the firehose to admins too', async () => {
    const admin = await connected('root', { admin: true });
    const answer = await subscribe(admin, '/jobs/*', await t.token('root', { admin: true }));
    expect(answer).toMatchObject({ type: 'subscribe_error', errors: [{ errorType: 'UnauthorizedException' }] });
    admin.ws.close();
  });

  it('stops delivering after unsubscribe_success', async () => {
    const [first, second] = [newJobId(), newJobId()];
    const socket = await connected('alice');
    const a = await subscribe(socket, channelFor('alice', first), await t.token('alice'));
    await subscribe(socket, channelFor('alice', second), await t.token('alice'));
    socket.send({ type: 'unsubscribe', id: a.id });
    expect(await socket.next((m) => m.id === a.id)).toEqual({ type: 'unsubscribe_success', id: a.id });
    const publisher = t.publisher();
    publisher.publish(textPush('alice', first, 1));
    await publisher.flush(5_000);
    publisher.publish(textPush('alice', second, 1));
    // Same socket, in order: the second job's data proves the first one's was not sent.
    const data = await socket.next((m) => m.type === 'data');
    expect(JSON.parse(data.event).jobId).toBe(second);
    socket.ws.close();
  });
});

describe('publishing', () => {
  it('refuses a client publish over the WebSocket: the namespace takes IAM publishers only', async () => {
    const socket = await connected('alice');
    socket.send({ type: 'publish', id: 'p1', channel: channelFor('alice', newJobId()), events: ['{}'], authorization: { host, Authorization: await t.token('alice') } });
    expect(await socket.next((m) => m.id === 'p1')).toMatchObject({ type: 'publish_error', errors: [{ errorType: 'UnauthorizedException' }] });
    socket.ws.close();
  });

  const body = () => JSON.stringify({ channel: channelFor('alice', newJobId()), events: ['{"a":1}'] });
  it('refuses an unsigned HTTP publish, and one signed with another key, with 401 UnauthorizedException', async () => {
    const unsigned = await fetch(t.hub.httpEndpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body() });
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toMatchObject({ errors: [{ errorType: 'UnauthorizedException' }] });
    const wrongKey = await createEventsSigner(REGION, { ...CREDENTIALS, secretAccessKey: 'guess' })(new URL(t.hub.httpEndpoint), body());
    const { host: _host, ...headers } = wrongKey.headers;
    expect((await fetch(t.hub.httpEndpoint, { method: 'POST', headers, body: wrongKey.body })).status).toBe(401);
  });

  it.each([
    ['more than 5 events', { channel: channelFor('alice', newJobId()), events: Array(6).fill('1') }],
    ['an event that is not JSON text', { channel: channelFor('alice', newJobId()), events: ['{oops'] }],
    ['a wildcard channel', { channel: '/jobs/*', events: ['1'] }],
  ])('answers a signed publish with %s with 400 BadRequestException', async (_, payload) => {
    const signed = await createEventsSigner(REGION, CREDENTIALS)(new URL(t.hub.httpEndpoint), JSON.stringify(payload));
    const { host: _host, ...headers } = signed.headers;
    const res = await fetch(t.hub.httpEndpoint, { method: 'POST', headers, body: signed.body });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ errors: [{ errorType: 'BadRequestException' }] });
  });

  it('answers a signed publish with the identifiers of the accepted events', async () => {
    const signed = await createEventsSigner(REGION, CREDENTIALS)(new URL(t.hub.httpEndpoint), body());
    const { host: _host, ...headers } = signed.headers;
    const res = await fetch(t.hub.httpEndpoint, { method: 'POST', headers, body: signed.body });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ successful: [{ identifier: expect.any(String), index: 0 }], failed: [] });
  });
});

#!/usr/bin/env node
// A Tacocat Arena bot in plain JavaScript (Node 18+), playing the "greedy" plan of
// example_bots/greedy_bot.py. It needs no generated code: @grpc/proto-loader reads
// proto/tacocat/v1/arena.proto when the bot starts. Copy it and change decide().
//
//   cd example_bots/node && npm ci
//   TACOCAT_ARENA_ADDRESS=127.0.0.1:50051 TACOCAT_ARENA_BOT=mybot TACOCAT_ARENA_TOKEN=secret \
//     node bot.js
//
// TACOCAT_ARENA_ADDRESS is HOST:PORT or a Unix socket, unix:/PATH (what the arena's sandbox
// gives a bot: its only way out); @grpc/grpc-js takes both forms as they are.
//
// The protocol (handshake, ordering, timing, errors) is documented in arena.proto and in
// docs/protocol.md. Exit status: 0 when the referee ends the session, 1 on any gRPC error
// and when the stream ends before a Welcome (the referee never took the session).
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const GRPC_JS_VERSION = require('@grpc/grpc-js/package.json').version;

// proto/ holds a copy of the repository's proto/tacocat/v1/arena.proto (python proto/generate.py
// keeps it equal), so this folder works wherever it is copied.
const PROTO_PATH = path.resolve(__dirname, 'proto/tacocat/v1/arena.proto');
const ADDRESS = process.env.TACOCAT_ARENA_ADDRESS || '127.0.0.1:50051';
const TOKEN = process.env.TACOCAT_ARENA_TOKEN || '';
const BOT_NAME = process.env.TACOCAT_ARENA_BOT || 'node-greedy';
const TRACE = Boolean(process.env.TACOCAT_ARENA_TRACE); // print every message to stderr
const CONNECT_TIMEOUT_MS = 30000;
// After SERVER_SHUTDOWN or a lost stream, reconnect with backoff (1 s, 2 s, 4 s... up to
// 30 s, for up to 10 minutes), as the Python SDK does: on for a `serve` arena's TCP address,
// off for a unix: socket (a sandbox) and whenever TACOCAT_BOT_RECONNECT=0 (every bot that
// tacocat-arena starts gets it: its launcher restarts it when it must).
const RECONNECT_SETTING = process.env.TACOCAT_BOT_RECONNECT || '';
const RECONNECT = RECONNECT_SETTING
  ? !['0', 'false', 'no'].includes(RECONNECT_SETTING) : !ADDRESS.startsWith('unix:');
const RECONNECT_FOR_MS = 600000;
// TACOCAT_BOT_FAIL=attack (or replace, duel, defend) makes decide() throw on that kind of
// decision, to see the fallback below at work (tests/test_node_bot.py uses it).
const FAIL_KIND = (process.env.TACOCAT_BOT_FAIL || '').toUpperCase();
// The longest Action.fallback reason sent (the referee keeps 200 characters).
const MAX_FALLBACK_CHARS = 200;
// TACOCAT_BOT_SLOW=N:SLOW_MS:THINK_MS[:M] makes the first N decide() calls block SLOW_MS and
// the later ones (the next M of them, if M is given) THINK_MS, each saying `decided K: request
// R of game G` on stderr, to see a bot that falls behind its clock catch up
// (tests/test_sdk_behind.py uses it).
const [SLOW_CALLS, SLOW_MS, THINK_MS, THINK_CALLS = Infinity] = (
  process.env.TACOCAT_BOT_SLOW || '0:0:0').split(':').map(Number);
let decisions = 0;

// keepCase: field names exactly as in the .proto (game_id, not gameId).
// longs: String: uint64 request_id arrives as a string and is echoed back untouched.
// enums: String: kind is 'DECISION_KIND_DUEL' rather than 2.
// defaults: true: unset scalars/lists read as 0 / '' / [] (proto3 semantics). Fields of a
//   oneof and proto3 `optional` fields get no default: they are undefined when absent.
// oneofs: true: each decoded oneof also gets a field naming its set case, e.g.
//   msg.message === 'decision_request', legal.options === 'duel'.
const packageDefinition = protoLoader.loadSync(PROTO_PATH, {
  keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
});
const tacocat = grpc.loadPackageDefinition(packageDefinition).tacocat.v1;

// Presence check for `optional` fields (attacker, winner_seat): 0 is a valid seat.
const has = (obj, field) => obj != null && obj[field] !== undefined && obj[field] !== null;

// ---------------------------------------------------------------------------------------
// Strategy: the greedy heuristic. The round is won by the LOWER last card, and a sacrifice
// always costs your lowest card, so keep the lowest card and fight with the others.
// Every function gets the DecisionRequest's SeatView (hand ascending) and LegalOptions.
// ---------------------------------------------------------------------------------------

// Replace: throw away middle cards (5-8), good neither for fighting nor for the showdown;
// never the lowest card, and never more than the cap.
function chooseReplace(view, options) {
  const middle = view.hand.slice(1).filter((card) => card >= 5 && card <= 8);
  return middle.slice(0, options.max_discard);
}

// Duel: win the first attack with the highest card; with two cards keep the higher back
// (the lower one is the better showdown card), so duel the lowest.
function chooseDuel(view, options) {
  const values = options.values; // distinct hand values, ascending; all legal
  return view.hand.length > 2 ? values[values.length - 1] : values[0];
}

// Attack: the biggest legal attack that keeps the lowest card (spare copies of it may go),
// the lowest top card on a tie. options.attacks lists every legal attack, so pick one.
function chooseAttack(view, options) {
  const lowest = view.hand[0];
  const spares = view.hand.filter((card) => card === lowest).length - 1;
  const score = (cards) => [
    cards.filter((card) => card === lowest).length <= spares ? 1 : 0, // keeps the lowest
    cards.length,
    -Math.max(...cards),
  ];
  let best = options.attacks[0].cards;
  for (const attack of options.attacks) {
    const [a, b] = [score(attack.cards), score(best)];
    const better = a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2];
    if (better) best = attack.cards;
  }
  return best;
}

// Defend: beat each attack card with the cheapest unused card that does it, never the
// lowest card; otherwise sacrifice. Answers come in the order of view.current_attack.
function chooseDefence(view, options) {
  const unused = view.hand.slice(1); // ascending, lowest card held back
  return options.cards.map(({ attack_card }) => {
    const index = unused.findIndex((card) => card >= attack_card);
    if (index < 0) return { sacrifice: true };
    const [card] = unused.splice(index, 1);
    return { defend_with: card };
  });
}

// Turns one DecisionRequest into the body of its Action (without game_id/request_id).
function decide(request) {
  const { view, legal } = request;
  if (process.env.TACOCAT_BOT_SLOW) {
    decisions += 1;
    const thinking = decisions <= SLOW_CALLS + THINK_CALLS ? THINK_MS : 0;
    const ms = decisions <= SLOW_CALLS ? SLOW_MS : thinking; // blocks, as a long search would
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    console.error(`decided ${decisions}: request ${request.request_id} of game ${request.game_id}`);
  }
  if (FAIL_KIND && request.kind === `DECISION_KIND_${FAIL_KIND}`) {
    throw new Error(`TACOCAT_BOT_FAIL=${FAIL_KIND.toLowerCase()}`);
  }
  switch (request.kind) {
    case 'DECISION_KIND_REPLACE':
      return { replace: { discard: chooseReplace(view, legal.replace) } };
    case 'DECISION_KIND_DUEL':
      return { duel: { card: chooseDuel(view, legal.duel) } };
    case 'DECISION_KIND_ATTACK':
      return { attack: { cards: chooseAttack(view, legal.attack) } };
    case 'DECISION_KIND_DEFEND':
      return { defend: { answers: chooseDefence(view, legal.defend) } };
    default: throw new Error(`unknown decision kind ${request.kind}`);
  }
}

// A legal answer that needs no thought, used if decide() throws (a bug should not forfeit).
// The Action says so in `fallback` (arena.proto), so the referee counts it as an error of
// this bot instead of taking it for the bot's own move.
function fallback(request, error) {
  const reason = `decide() threw ${error && error.name}: ${error && error.message}`
    .split(/\s+/).join(' ').slice(0, MAX_FALLBACK_CHARS);
  return { ...defaultMove(request), fallback: reason };
}

function defaultMove(request) {
  const { legal } = request;
  if (legal.duel) return { duel: { card: legal.duel.values[0] } };
  if (legal.attack) return { attack: { cards: legal.attack.attacks[0].cards } };
  if (legal.defend) {
    return { defend: { answers: legal.defend.cards.map(() => ({ sacrifice: true })) } };
  }
  return { replace: { discard: [] } };
}

// ---------------------------------------------------------------------------------------
// Requests wait here for their turn, so that a bot which fell behind its clock catches up.
// ---------------------------------------------------------------------------------------

// A decide() that takes longer than its time blocks the event loop: meanwhile the referee
// times the request out, plays a default move or forfeits the game (its failure policy) and
// sends the next request. Answering every request in arrival order would spend the bot's time
// on answers the referee ignores (STALE_REPLY) and start every later one late: one slow move
// would become a run of timeouts. So requests wait in `waiting`, one per game (a game has at
// most one open request), and are decided on a later turn of the event loop, after the
// messages read meanwhile: a request that got its TIMEOUT, whose game has a newer request or
// has ended, or whose time_left_ms + time_bank_left_ms have passed since it was read is
// skipped. The first skip is shown, the others counted.
const waiting = new Map(); // game_id -> { call, request, readAt }, oldest first
let draining = false;
let skipped = 0;

function skip(request, why) {
  skipped += 1;
  if (skipped > 1) return;
  console.error(`node bot: skipped request ${request.request_id} of game ${request.game_id}: ` +
    `${why}, so no answer could count. The bot is behind its clock; requests that can no ` +
    'longer count are skipped, so that it catches up, and counted, not shown');
}

// A request no answer can count for any more leaves `waiting` unanswered.
function lapse(gameId, why, requestId) {
  const entry = waiting.get(gameId);
  if (!entry || (requestId !== undefined && entry.request.request_id !== requestId)) return;
  waiting.delete(gameId);
  skip(entry.request, why);
}

function wait(call, request) {
  lapse(request.game_id, 'a newer request of its game had come');
  waiting.set(request.game_id, { call, request, readAt: Date.now() });
  if (!draining) {
    draining = true;
    setImmediate(decideNext);
  }
}

// Decide the oldest waiting request, then yield to the event loop (messages read meanwhile
// come first) before the next one.
function decideNext() {
  const next = waiting.entries().next();
  if (next.done) { // emptied by a new connection (main)
    draining = false;
    return;
  }
  const [gameId, { call, request, readAt }] = next.value;
  waiting.delete(gameId);
  const allowedMs = request.time_left_ms + request.time_bank_left_ms;
  if (request.time_left_ms && Date.now() - readAt > allowedMs) {
    skip(request, `its ${allowedMs} ms had run out`);
  } else {
    answer(call, request);
  }
  if (waiting.size) setImmediate(decideNext);
  else draining = false;
}

function answer(call, request) {
  let body;
  try {
    body = decide(request);
  } catch (error) {
    console.error(`node bot: decide() failed in ${request.game_id}: ${error.stack}`);
    body = fallback(request, error);
  }
  // Echo game_id and request_id exactly (request_id is a uint64, kept as a string).
  send(call, { action: { game_id: request.game_id, request_id: request.request_id, ...body } });
}

// ---------------------------------------------------------------------------------------
// The session: one bidirectional stream; messages of several games interleave.
// ---------------------------------------------------------------------------------------

// Per-game state, keyed by game_id (games interleave). The greedy plan needs none beyond the
// request itself; a smarter bot would remember the opponent's play here.
const games = new Map(); // game_id -> { seat, opponent } for the games in progress
const tally = { WIN: 0, LOSS: 0, DRAW: 0, NO_CONTEST: 0 };
let sessionEnded = false;
let sessionEndReason = '';
let hadSession = false; // a Welcome came on this connection
let lostAt = null; // when the last session was lost (null: none lost, or back since)
let attempt = 0;

// Schedule a new connection after a wait; false if reconnecting is off or has lasted too long.
function reconnect(why) {
  if (!RECONNECT) return false;
  if (lostAt === null) lostAt = Date.now();
  if (Date.now() - lostAt > RECONNECT_FOR_MS) return false;
  const waitMs = Math.min(1000 * 2 ** attempt, 30000) * (1 + Math.random() / 5);
  attempt += 1;
  console.error(`node bot ${BOT_NAME}: ${why}; reconnecting in ${(waitMs / 1000).toFixed(1)} s ` +
    '(set TACOCAT_BOT_RECONNECT=0 to stop instead)');
  setTimeout(main, waitMs);
  return true;
}

function statusName(code) {
  return Object.keys(grpc.status).find((name) => grpc.status[name] === code) || String(code);
}

function fail(text) {
  console.error(`node bot ${BOT_NAME}: ${text}`);
  process.exit(1);
}

// Every write goes through here. grpc-js serialises writes on one stream by itself.
function send(call, msg) {
  if (TRACE) {
    const masked = (key, value) => (key === 'token' && value ? '***' : value); // hide the secret
    console.error(`-> ${JSON.stringify(msg, masked)}`);
  }
  call.write(msg);
}

function onMessage(call, msg) {
  if (TRACE) console.error(`<- ${JSON.stringify(msg)}`);
  switch (msg.message) { // the name of the oneof case that is set (oneofs: true)
    case 'welcome':
      hadSession = true;
      lostAt = null;
      attempt = 0;
      console.error(`node bot ${msg.welcome.bot_name}: connected to ${ADDRESS} ` +
        `(${msg.welcome.server_info}, session ${msg.welcome.session_id}, ` +
        `${msg.welcome.decision_timeout_ms} ms per decision)`);
      break;
    case 'game_start':
      games.set(msg.game_start.game_id, {
        seat: msg.game_start.seat, opponent: msg.game_start.opponent_name,
      });
      break;
    case 'decision_request': // decided on a later turn of the event loop (above)
      wait(call, msg.decision_request);
      break;
    case 'error': { // a refused Action or a timeout; the stream goes on
      const e = msg.error;
      if (e.code === 'ERROR_CODE_TIMEOUT') {
        lapse(e.game_id, 'the referee had timed it out', e.request_id);
      }
      console.error(`node bot: referee error ${e.code} (${e.outcome}) in game ` +
        `${e.game_id || '-'} request ${e.request_id}: ${e.message}`);
      break;
    }
    case 'game_end': {
      const end = msg.game_end;
      games.delete(end.game_id);
      lapse(end.game_id, 'its game was over');
      const result = end.result.replace('GAME_RESULT_', '');
      tally[result] = (tally[result] || 0) + 1;
      const winner = has(end, 'winner_seat') ? `seat ${end.winner_seat}` : 'nobody';
      if (end.reason !== 'END_REASON_GOAL' && end.reason !== 'END_REASON_ROUND_CAP') {
        console.error(`node bot: game ${end.game_id} ended by ${end.reason}, winner ` +
          `${winner}: ${end.detail}`);
      }
      break;
    }
    case 'session_end':
      sessionEnded = true;
      sessionEndReason = msg.session_end.reason;
      console.error(`node bot: session over (${msg.session_end.reason}: ` +
        `${msg.session_end.message}); won ${tally.WIN}, lost ${tally.LOSS}, drew ${tally.DRAW}` +
        (skipped ? `; skipped ${skipped} requests that could no longer count` : ''));
      call.end(); // half-close our side; the referee then ends the stream with status OK
      break;
    default: // a case added by a newer referee: ignore it, as the protocol asks
      break;
  }
}

function main() {
  const client = new tacocat.Arena(ADDRESS, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 20000, // HTTP/2 keepalive: the protocol has no ping message
    'grpc.keepalive_timeout_ms': 10000,
  });
  // Wait for the referee to listen (a tournament may start bots before it is ready).
  sessionEnded = false;
  sessionEndReason = '';
  hadSession = false;
  waiting.clear(); // the last connection's requests died with it
  client.waitForReady(Date.now() + CONNECT_TIMEOUT_MS, (error) => {
    if (error) {
      client.close();
      if (lostAt !== null && reconnect(`no referee at ${ADDRESS} yet`)) return;
      fail(`cannot reach the referee at ${ADDRESS}: ${error.message}`);
    }
    // The token goes in Hello.token; `authorization: Bearer <token>` metadata would also do.
    const call = client.Play();
    call.on('data', (msg) => onMessage(call, msg));
    // A non-OK status (UNAUTHENTICATED, FAILED_PRECONDITION, a dropped connection...).
    call.on('error', (error) => {
      if (sessionEnded && error.code === grpc.status.CANCELLED) return;
      if (hadSession) console.error(`node bot ${BOT_NAME}: lost the connection to ${ADDRESS}`);
      client.close();
      if (hadSession && error.code === grpc.status.UNAVAILABLE &&
          reconnect(`lost the connection to ${ADDRESS}`)) return;
      fail(`the referee ended the session: ${statusName(error.code)}: ${error.details}`);
    });
    // The stream ended with status OK: normally right after SessionEnd.
    call.on('end', () => {
      client.close();
      // Before a Welcome the referee never took the session: a wrong address (another
      // service answering), a referee stopping, or a bug of ours. Exit non-zero, so a
      // launcher or a script sees the failure instead of a bot that "finished".
      if (!hadSession) {
        fail(`the stream to ${ADDRESS} ended before a Welcome: the referee never accepted ` +
          'this session (is TACOCAT_ARENA_ADDRESS a tacocat-arena referee?)');
      }
      if (!sessionEnded) console.error('node bot: the stream ended without a SessionEnd');
      if (sessionEndReason === 'SESSION_END_REASON_SERVER_SHUTDOWN' &&
          reconnect('the server is shutting down')) return;
      process.exitCode = 0;
    });
    send(call, {
      hello: {
        protocol_version: 1, bot_name: BOT_NAME, token: TOKEN,
        client_info: `node example bot (node ${process.version}, grpc-js ${GRPC_JS_VERSION})`,
        max_concurrent_games: 0, // let the referee decide
      },
    });
  });
}

main();

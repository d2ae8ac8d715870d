/**
 * The abusive source of the slow-clients bench, run as a child process of its own (so its CPU is not the load
 * generator's and can be measured apart): from `source` it keeps `connections` slow-body connections going to
 * `127.0.0.1:port` — each a `POST path` announcing a 1,000,000-byte body, then one byte every `trickleMs`; when the
 * service closes one, it is opened again `reopenMs` later.
 *
 * Started with `fork` and one JSON argument ({@link AttackerOptions}); sends `{ started: true }` once every first
 * connection is under way. On the message `'stop'` it closes every socket and answers `{ opened }`, the
 * connections it tried.
 */
import net from 'node:net';

/** What the attacker does (JSON in `process.argv[2]`). */
export interface AttackerOptions {
  port: number;
  path: string;
  token: string;
  /** local address the connections are bound to, e.g. `127.0.0.2` */
  source: string;
  /** connections tried at once */
  connections: number;
  /** one byte of the body every this many ms */
  trickleMs: number;
  /** a closed connection is opened again after this many ms */
  reopenMs: number;
}

/** What the attacker reports when stopped. */
export interface AttackerReport {
  opened: number;
}

const options = JSON.parse(process.argv[2] ?? '{}') as AttackerOptions;
const head =
  `POST ${options.path} HTTP/1.1\r\nhost: bench\r\nauthorization: ${options.token}\r\n` +
  'content-type: application/json\r\ncontent-length: 1000000\r\n\r\n{';
let running = true;
let opened = 0;
const sockets = new Set<net.Socket>();

function open(): void {
  if (!running) return;
  opened++;
  const socket = net.connect({ host: '127.0.0.1', port: options.port, localAddress: options.source });
  sockets.add(socket);
  let trickle: NodeJS.Timeout | undefined;
  socket.on('connect', () => {
    socket.write(head);
    trickle = setInterval(() => socket.write(' '), options.trickleMs);
  });
  // the service answers nothing until the body is complete; data means it closed the request (408)
  socket.on('data', () => undefined);
  socket.on('error', () => undefined);
  socket.on('close', () => {
    clearInterval(trickle);
    sockets.delete(socket);
    if (running) setTimeout(open, options.reopenMs);
  });
}

for (let index = 0; index < options.connections; index++) open();
process.send?.({ started: true });

process.on('message', (message) => {
  if (message !== 'stop') return;
  running = false;
  for (const socket of sockets) socket.destroy();
  const report: AttackerReport = { opened };
  process.send?.(report, () => process.exit(0));
});

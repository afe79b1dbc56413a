// A TCP proxy between Baton and a PostgreSQL server that loses the answer to one COMMIT: the
// commit reaches the server and lands, and the client's connection is cut before the server's
// answer reaches it — the client cannot tell whether its transaction landed (a network cut or a
// server going away at that moment). New connections are refused for a while after the cut, as in
// a short outage. Which COMMIT: the first one sent on a connection whose transaction sent `marker`
// (a piece of SQL, e.g. `INSERT INTO runtimes`: a claim).
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface CommitCut {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /** Resolves once a COMMIT's answer was withheld and the connection cut. */
  readonly cut: Promise<void>;
  close(): Promise<void>;
}

export async function cutCommitAnswer(options: {
  targetPort: number;
  marker: string;
  /** How long new connections are refused after the cut. */
  outageMs: number;
}): Promise<CommitCut> {
  let cutAt: number | undefined;
  let signalCut!: () => void;
  const cut = new Promise<void>((resolve) => (signalCut = resolve));
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (cutAt !== undefined && Date.now() - cutAt < options.outageMs) {
      client.destroy();
      return;
    }
    const upstream = connect(options.targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    // What the client sent since its last COMMIT (latin1: the SQL is ASCII), to find the marker.
    let sent = '';
    let armed = false;
    client.on('data', (chunk: Buffer) => {
      if (cutAt === undefined) {
        sent += chunk.toString('latin1');
        if (sent.includes(options.marker) && /COMMIT/.test(sent.slice(sent.indexOf(options.marker)))) armed = true;
        else if (/COMMIT/.test(sent)) sent = '';
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (armed && cutAt === undefined) {
        // The server answered the COMMIT (it landed): the answer is dropped with the connection.
        cutAt = Date.now();
        client.destroy();
        upstream.destroy();
        signalCut();
        return;
      }
      client.write(chunk);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the proxy has no port');
  return {
    port: address.port,
    cut,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * TCP relays to the MySQL server on 127.0.0.1 (a free port), each a misbehaving network or proxy:
 * - {@link startGreetingRelay} clears capability flags in the server's greeting (its first packet) and passes
 *   everything else through unchanged: a server, or a proxy, that does not offer a capability, e.g.
 *   CLIENT_MULTI_STATEMENTS. Plain TCP only (a client asking for TLS would need the flag the relay leaves alone).
 * - {@link startDroppingRelay} closes both ends of a connection whose client sends a given statement: a
 *   connection lost at that point, as on a failover.
 */
import net from 'node:net';

/** CLIENT_MULTI_STATEMENTS in the protocol's capability flags. */
export const CLIENT_MULTI_STATEMENTS = 1 << 16;

/**
 * Clears `flags` in a complete greeting packet (header included), in place. Layout of protocol 10: version byte,
 * server version (NUL-terminated), thread id (4), auth data (8), filler (1), capabilities low (2), charset (1),
 * status (2), capabilities high (2).
 */
export function clearGreetingFlags(packet: Buffer, flags: number): void {
  let at = 4 + 1;
  at = packet.indexOf(0, at) + 1 + 4 + 8 + 1;
  const low = packet.readUInt16LE(at);
  const high = packet.readUInt16LE(at + 5);
  const capabilities = (low | (high << 16)) & ~flags;
  packet.writeUInt16LE(capabilities & 0xffff, at);
  packet.writeUInt16LE((capabilities >>> 16) & 0xffff, at + 5);
}

export interface GreetingRelay {
  port: number;
  close(): Promise<void>;
}

type Target = { host: string; port: number };

/** A relay to `target` whose connections `wire` joins (each socket's errors close both). */
async function startRelay(target: Target, wire: (client: net.Socket, upstream: net.Socket) => void): Promise<GreetingRelay> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => { client.destroy(); upstream.destroy(); });
    }
    wire(client, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** Starts a relay to `target` clearing `flags` in every greeting. */
export function startGreetingRelay(target: Target, flags: number): Promise<GreetingRelay> {
  return startRelay(target, (client, upstream) => {
    let greeting: Buffer | null = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      if (greeting === null) {
        client.write(chunk);
        return;
      }
      greeting = Buffer.concat([greeting, chunk]);
      if (greeting.length < 4 || greeting.length < 4 + greeting.readUIntLE(0, 3)) return;
      clearGreetingFlags(greeting, flags);
      client.write(greeting);
      greeting = null;
    });
    client.pipe(upstream);
    upstream.on('end', () => client.end());
    client.on('end', () => upstream.end());
  });
}

export interface DroppingRelay extends GreetingRelay {
  /** Connections dropped so far. */
  drops(): number;
}

/** Starts a relay to `target` that closes both ends of a connection whose client sends a packet containing `marker`. */
export async function startDroppingRelay(target: Target, marker: string): Promise<DroppingRelay> {
  let drops = 0;
  const relay = await startRelay(target, (client, upstream) => {
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      if (chunk.includes(marker)) {
        drops += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
  });
  return { ...relay, drops: () => drops };
}

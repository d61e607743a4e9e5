/**
 * The local hub's subscriptions by channel, in memory: a publish is delivered to every subscription of its exact
 * channel and of each wildcard prefix above it (`/jobs/<owner>/*` covers `/jobs/<owner>/<job>`), with no
 * database read per watcher and each event serialized once for all of them.
 */

/** One subscription of one connection. */
export interface HubSubscription {
  /** The client's subscription id (echoed in every `data` message). */
  id: string;
  /** The channel as subscribed, normalized to a leading `/`. */
  channel: string;
  /** Sends a text frame; false when the connection is gone or cut for being too slow. */
  send(text: string): boolean;
}

export class HubChannels {
  private readonly exact = new Map<string, Set<HubSubscription>>();
  /** Key: the path before `/*`. */
  private readonly wildcard = new Map<string, Set<HubSubscription>>();

  add(sub: HubSubscription): void {
    const [map, key] = this.slot(sub.channel);
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(sub);
  }

  remove(sub: HubSubscription): void {
    const [map, key] = this.slot(sub.channel);
    const set = map.get(key);
    set?.delete(sub);
    if (set?.size === 0) map.delete(key);
  }

  /** Subscriptions held now. */
  count(): number {
    let n = 0;
    for (const set of [...this.exact.values(), ...this.wildcard.values()]) n += set.size;
    return n;
  }

  /** Sends each event (a JSON text) to every subscription covering `channel`; the number of deliveries. */
  deliver(channel: string, events: readonly string[]): number {
    const targets = this.subscribersOf(channel);
    if (targets.length === 0) return 0;
    let delivered = 0;
    for (const event of events) {
      const eventField = JSON.stringify(event);
      for (const sub of targets) {
        if (sub.send(`{"type":"data","id":${JSON.stringify(sub.id)},"event":${eventField}}`)) delivered += 1;
      }
    }
    return delivered;
  }

  private subscribersOf(channel: string): HubSubscription[] {
    const found: HubSubscription[] = [...(this.exact.get(channel) ?? [])];
    const segments = channel.split('/');
    for (let end = segments.length - 1; end >= 2; end -= 1) {
      for (const sub of this.wildcard.get(segments.slice(0, end).join('/')) ?? []) found.push(sub);
    }
    return found;
  }

  private slot(channel: string): [Map<string, Set<HubSubscription>>, string] {
    return channel.endsWith('/*') ? [this.wildcard, channel.slice(0, -2)] : [this.exact, channel];
  }
}

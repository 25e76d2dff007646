// Who gets a connection slot. A bound on the total alone lets one source take every slot:
// with 2,400 hanging connections from elsewhere, a review on a fresh connection got a
// reset (the API server opens one after an idle timeout or a Deed restart). So:
//
// - each peer address has a share (--max-connections-per-peer) as well as the total
//   (--max-connections);
// - at either bound, a newcomer does not lose to a connection still in its TLS handshake:
//   the oldest such connection (of the same peer, or of the peer holding the most) is
//   closed to make room. A hanging handshake costs an attacker nothing, and the API
//   server's completes in milliseconds, so the newcomer gets its chance;
// - a connection that completed a handshake is never closed for a newcomer: with
//   --client-ca that means one that presented the API server's certificate, so an
//   authenticated connection is never refused for slots unauthenticated ones hold (they
//   cannot get past the handshake). Without --client-ca, connections that completed a
//   handshake keep their slot until a deadline closes them.

/** How far a connection got; only `handshake` can be closed to make room. */
export type SlotState = 'handshake' | 'established';

export interface Slot {
  peer: string;
  state: SlotState;
  /** Closes the connection. */
  close(): void;
}

export type Refusal = 'total' | 'peer';

export type Admission = { admitted: true; evicted?: { slot: Slot; reason: Refusal } } | { admitted: false; reason: Refusal };

export class ConnectionSlots {
  // Insertion order is age: the first one found is the oldest.
  private readonly byPeer = new Map<string, Set<Slot>>();
  private readonly inHandshake = new Map<string, Set<Slot>>();
  private count = 0;

  constructor(
    private readonly max: number,
    private readonly maxPerPeer: number,
  ) {}

  get size(): number {
    return this.count;
  }

  peerCount(peer: string): number {
    return this.byPeer.get(peer)?.size ?? 0;
  }

  /** Admits a newcomer in its handshake, closing one connection in handshake to make room if need be. */
  admit(slot: Slot): Admission {
    let evicted: { slot: Slot; reason: Refusal } | undefined;
    if (this.peerCount(slot.peer) >= this.maxPerPeer) {
      const victim = first(this.inHandshake.get(slot.peer));
      if (victim === undefined) return { admitted: false, reason: 'peer' };
      this.evict(victim);
      evicted = { slot: victim, reason: 'peer' };
    }
    if (this.count >= this.max) {
      const victim = this.victim();
      if (victim === undefined) return { admitted: false, reason: 'total' };
      this.evict(victim);
      evicted = { slot: victim, reason: 'total' };
    }
    this.add(slot);
    return evicted ? { admitted: true, evicted } : { admitted: true };
  }

  /** The handshake completed: the slot can no longer be taken for a newcomer. */
  established(slot: Slot): void {
    if (slot.state === 'established') return;
    this.inHandshake.get(slot.peer)?.delete(slot);
    slot.state = 'established';
  }

  /** The connection closed. */
  remove(slot: Slot): void {
    const set = this.byPeer.get(slot.peer);
    if (set === undefined || !set.delete(slot)) return;
    this.count--;
    if (set.size === 0) this.byPeer.delete(slot.peer);
    const pending = this.inHandshake.get(slot.peer);
    pending?.delete(slot);
    if (pending?.size === 0) this.inHandshake.delete(slot.peer);
  }

  private add(slot: Slot): void {
    let set = this.byPeer.get(slot.peer);
    if (set === undefined) this.byPeer.set(slot.peer, (set = new Set()));
    set.add(slot);
    this.count++;
    if (slot.state === 'handshake') {
      let pending = this.inHandshake.get(slot.peer);
      if (pending === undefined) this.inHandshake.set(slot.peer, (pending = new Set()));
      pending.add(slot);
    }
  }

  /** The oldest connection in handshake of the peer holding the most connections. */
  private victim(): Slot | undefined {
    let best: { peer: string; size: number } | undefined;
    for (const peer of this.inHandshake.keys()) {
      const size = this.peerCount(peer);
      if (best === undefined || size > best.size) best = { peer, size };
    }
    return best === undefined ? undefined : first(this.inHandshake.get(best.peer));
  }

  private evict(slot: Slot): void {
    this.remove(slot);
    slot.close();
  }
}

function first<T>(set: Set<T> | undefined): T | undefined {
  if (set === undefined) return undefined;
  for (const v of set) return v;
  return undefined;
}

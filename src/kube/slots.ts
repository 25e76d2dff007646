// Turns for work that must not all run at once (object-reader.ts: lists for reviews): at most
// `size` hold a turn, the rest wait in order until one frees or their own time runs out.

/** At most `size` holders at once; the rest wait their turn, in order, or give up after their time. */
export class Slots {
  private held = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly size: number) {}

  /** Nobody holds a turn or waits for one. */
  get idle(): boolean {
    return this.held === 0 && this.waiting.length === 0;
  }

  /** A release function once a turn is held, or undefined when none freed within `timeoutMs`. */
  async take(timeoutMs: number): Promise<(() => void) | undefined> {
    if (this.held >= this.size) {
      const turn = await new Promise<boolean>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(wake), 1);
          resolve(false);
        }, timeoutMs);
        this.waiting.push(wake);
      });
      if (!turn) return undefined;
    } else this.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next !== undefined) next(); // the turn passes to the next in line
      else this.held--;
    };
  }
}

/** One turn at a time per key; a key's entry lives only while someone holds or waits for it. */
export class KeyedSlots {
  private readonly byKey = new Map<string, Slots>();

  async take(key: string, timeoutMs: number): Promise<(() => void) | undefined> {
    let slots = this.byKey.get(key);
    if (slots === undefined) this.byKey.set(key, (slots = new Slots(1)));
    const release = await slots.take(timeoutMs);
    const forget = () => {
      if (slots.idle && this.byKey.get(key) === slots) this.byKey.delete(key);
    };
    if (release === undefined) {
      forget();
      return undefined;
    }
    return () => {
      release();
      forget();
    };
  }
}

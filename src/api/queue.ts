// A single-consumer async queue: a producer pushes items as they arrive (socket messages) and ends
// the queue, possibly with an error that the consumer receives after every queued item.

export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private ended = false;
  private error: unknown;
  private hasError = false;

  push(item: T): void {
    if (this.ended) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  /** No more items; with an error, the consumer gets it after the queued items. Later calls are ignored. */
  end(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    if (error !== undefined) {
      this.error = error;
      this.hasError = true;
    }
    if (this.waiter && this.items.length === 0) {
      const w = this.waiter;
      this.waiter = undefined;
      if (this.hasError) w.reject(this.error);
      else w.resolve({ value: undefined, done: true });
    }
  }

  get isEnded(): boolean {
    return this.ended;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift()!, done: false });
    if (this.ended) {
      if (this.hasError) {
        const e = this.error;
        // Report the error once; later reads see a plain end.
        this.hasError = false;
        return Promise.reject(e);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      const r = await this.next();
      if (r.done) return;
      yield r.value;
    }
  }
}

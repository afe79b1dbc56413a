/** Runs async sections one at a time, in call order. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  run<T>(section: () => Promise<T>): Promise<T> {
    this.pending++;
    const result = this.tail.then(section);
    this.tail = result.then(
      () => this.pending--,
      () => this.pending--,
    );
    return result;
  }

  /** No section is running or waiting to run. */
  get idle(): boolean {
    return this.pending === 0;
  }
}

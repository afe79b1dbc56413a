/** A minimal typed event emitter, so the engine needs nothing from `vscode` (CONVENTIONS). */
export interface Disposable {
  dispose(): void;
}

export class Emitter<T> {
  private listeners = new Set<(value: T) => void>();

  readonly event = (listener: (value: T) => void): Disposable => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  get hasListeners(): boolean {
    return this.listeners.size > 0;
  }

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch {
        // A listener's failure is the listener's problem; the engine's state is already committed.
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}

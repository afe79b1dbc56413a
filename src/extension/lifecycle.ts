import type * as vscode from 'vscode';

/**
 * One disposable discipline (CONVENTIONS): everything a component creates is registered
 * with it and disposed with it; registering after disposal disposes at once.
 */
export class DisposableStore implements vscode.Disposable {
  private readonly items: vscode.Disposable[] = [];
  private disposed = false;

  protected _register<T extends vscode.Disposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.items.push(item);
    return item;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const item of this.items.splice(0).reverse()) {
      try {
        item.dispose();
      } catch {
        // one failing disposal must not keep the others alive
      }
    }
  }
}

/**
 * The dashboard webview's entry: it validates every message from the host (protocol), feeds
 * the reducer, and draws once per animation frame. Heartbeats are batched per frame, so 200
 * workers beating cost one pass over their rows, not 200 redraws.
 */
import { PROTOCOL_VERSION, type Beat, type WebviewMessage } from '../../src/protocol/messages';
import { applyBeats, initialState, receive, reduceUi, type DashboardState, type UiAction, type UiState } from './state';
import { DashboardView } from './view';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
/**
 * What VS Code keeps for the panel: the filter and selection, and the run shown — after a
 * reload its serializer (src/extension/dashboard.ts) restores the panel on that run.
 */
interface SavedState {
  ui?: Partial<UiState>;
  runId?: string;
}
const saved = vscode.getState() as SavedState | undefined;
let state: DashboardState = initialState(saved?.ui ?? {});
let savedRunId = saved?.runId;
const save = (): void =>
  vscode.setState({ ui: state.ui, ...(savedRunId ? { runId: savedRunId } : {}) } satisfies SavedState);
let pendingBeats: Beat[] = [];
let pendingBeatsNow = 0;
let frame = 0;

const post = (message: WebviewMessage): void => vscode.postMessage(message);
const dispatch = (action: UiAction): void => {
  const next = reduceUi(state, action);
  if (next === state) return;
  state = next;
  save();
  schedule();
};

const view = new DashboardView(document.getElementById('root')!, { post, dispatch });

function schedule(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    const at = performance.now();
    if (pendingBeats.length > 0) {
      state = applyBeats(state, pendingBeats, pendingBeatsNow, at);
      pendingBeats = [];
    }
    view.render(state);
  });
}

window.addEventListener('message', (event: MessageEvent) => {
  const received = receive(state, event.data, performance.now());
  if (received.error || !received.message) {
    // Never acted on; said where a developer looks (Developer: Open Webview Developer Tools).
    console.warn(`[baton dashboard] ${received.error}`);
    return;
  }
  const message = received.message;
  state = received.state;
  if (state.run && state.run.id !== savedRunId) {
    savedRunId = state.run.id;
    save();
  }
  if (message.type === 'heartbeats') {
    // Batched: applied once, in the next animation frame.
    pendingBeats.push(...message.beats);
    pendingBeatsNow = message.now;
  } else if (message.type === 'snapshot' && state.ui.selectedTask) {
    post({ type: 'requestTaskDetails', taskId: state.ui.selectedTask });
  }
  schedule();
});

post({ type: 'ready', protocolVersion: PROTOCOL_VERSION });

import { windowCommand } from './context';

/** Show Log: Baton's own output channel — in any window, a folder open or not. */
export const showLog = windowCommand((ctx) => ctx.log.show());

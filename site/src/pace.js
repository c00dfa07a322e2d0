// Pacing the page's own work so that its main thread never holds a task for
// long (RAIL's rule: no task over 50 ms, so a click or a key is answered
// within a frame).
//
// The worker sends its output in batches (worker.js flushOutbox, at most one
// message every 16 ms), and a batch can carry a thousand watch events for a
// dozen watches at once. A watch loop that reads its stream with `await
// reader.read()` does not give the browser a turn between reads: when the
// data is already queued, each `await` resumes as a microtask of the same
// task, so parsing the whole batch, every watch's part of it, becomes one
// long task.
//
// So the page keeps one budget per task, shared by everything that paces
// itself: the bridge marks the start of the task that delivers a batch
// (taskBegins), each consumer asks due() between pieces of work, and past
// the budget waits for a task of its own (yieldTask: scheduler.yield where
// the browser has it, else a MessageChannel message, which is not clamped
// the way a nested setTimeout is), whose start begins a new budget.
//
//   for (;;) {
//     const { done, value } = await reader.read();
//     for (const line of lines(value)) {
//       work(line);
//       if (due()) await yieldTask();
//     }
//   }

/** The ms of work one task may do before the next piece waits for a new task. */
export const BUDGET = 8;

let taskStart = performance.now();

/** taskBegins marks the start of a task (the bridge's onmessage). */
export function taskBegins() {
  taskStart = performance.now();
}

/** due is true once the current task has worked for the budget. */
export function due() {
  return performance.now() - taskStart > BUDGET;
}

/** yieldTask waits for a new task, and starts a new budget there. */
export async function yieldTask() {
  await nextTask();
  taskStart = performance.now();
}

/** nextTask resolves in a later task of the event loop, not a microtask. */
export function nextTask() {
  const s = globalThis.scheduler;
  if (s && typeof s.yield === 'function') return s.yield();
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      resolve();
    };
    ch.port2.postMessage(0);
  });
}

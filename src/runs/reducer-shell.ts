/** What a pure reducer answers to one event: its next state and the commands for its shell to perform, in order. */
export interface Step<State, Command> {
  readonly state: State;
  readonly commands: readonly Command[];
}

/**
 * The effectful shell of a pure reducer `(state, event) → { state, commands }`: reduces each
 * dispatched event and performs its commands in order. An event raised while commands are performed
 * (a synchronous answer, a subscriber that leaves on an event) waits for them to finish, so every event
 * meets the state its predecessors left.
 */
export function reducerShell<State, Event, Command>(
  reduce: (state: State, event: Event) => Step<State, Command>,
  initial: State,
  perform: (command: Command) => void,
): (event: Event) => void {
  let state = initial;
  const queue: Event[] = [];
  let performing = false;
  return (event) => {
    queue.push(event);
    if (performing) return;
    performing = true;
    try {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const step = reduce(state, next);
        state = step.state;
        for (const command of step.commands) perform(command);
      }
    } finally {
      performing = false;
    }
  };
}

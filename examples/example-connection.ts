/**
 * How the examples connect: to the service when FLOWSTREAM_API_KEY and FLOWSTREAM_BASE_URL are set,
 * otherwise to an emulator they start themselves (time 10x faster). Not an example on its own.
 *
 * The examples import from `../src` so that they run straight from a clone (`npx tsx examples/…`);
 * in your code, import from `flowstream`, `flowstream/node` and `flowstream/emulator`.
 */
import { type Emulator, type WorkflowDefinition, createEmulator } from '../src/emulator/index.js';
import { type Client, type ClientOptions, createClient } from '../src/index.js';

export interface ExampleConnection {
  readonly client: Client;
  /** Present when the example runs against its own emulator. */
  readonly emulator?: Emulator;
  /** Stops the emulator, if the example started one. */
  readonly close: () => Promise<void>;
}

/**
 * A client for an example, and the emulator behind it when no service is configured. `workflows` are
 * added to that emulator (they do not exist on the service); `options` are the client's other options.
 */
export async function connectForExample(workflows: readonly WorkflowDefinition[] = [], options: Partial<ClientOptions> = {}): Promise<ExampleConnection> {
  const apiKey = process.env['FLOWSTREAM_API_KEY'];
  const baseUrl = process.env['FLOWSTREAM_BASE_URL'];
  if (apiKey !== undefined && baseUrl !== undefined) {
    return { client: createClient({ ...options, apiKey, baseUrl }), close: () => Promise.resolve() };
  }
  const emulator = await createEmulator({ speed: 10, workflows });
  return {
    client: createClient({ ...options, apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler }),
    emulator,
    close: () => emulator.close(),
  };
}

// The public surface of `flowstream/relay`, export by export.
export { createRunRelay, type RunRelay, type RunRelayOptions, type RelayClient, type RelayCors, type StartDecision } from './run-relay.js';
export { createRunTokens, type RunTokens, type RunTokensOptions, type RunScope, type RunTokenScope, type RunTokenClaims, type SignRequest, type VerifyRequest } from './run-tokens.js';
export { RunTokenError, isRunTokenError, type RunTokenProblem } from './run-token-error.js';
export { toNodeListener, type NodeRequest, type NodeResponse } from './node-listener.js';

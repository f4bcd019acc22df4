import type { PipelinePlan } from './pipeline-plan.js';

/** Where a step stands within one subscription of a pipeline. */
export type StepPhase = 'waiting' | 'running' | 'finish' | 'failed' | 'aborted' | 'skipped' | 'detached';

/**
 * What the pipeline should do now: steps to start, and steps that can never start, each with the step
 * that blocks it.
 */
export interface Moves<Name extends string> {
  readonly start: readonly Name[];
  readonly skip: readonly (readonly [step: Name, blockedBy: Name])[];
}

function isDead(phase: StepPhase | undefined): boolean {
  return phase === 'failed' || phase === 'aborted' || phase === 'skipped';
}

/**
 * The next moves of a pipeline, from the phases of its steps. A waiting step starts when all its
 * dependencies finished, or at once when it is `attached` (resumed from a checkpoint: it already
 * started, earlier). It is skipped when a dependency failed, was aborted or skipped — transitively,
 * since the plan's order puts dependencies first — or when the pipeline was stopped by `stoppedBy`.
 */
export function nextMoves<Name extends string>(
  plan: PipelinePlan<Name>,
  phases: ReadonlyMap<Name, StepPhase>,
  attached: ReadonlySet<Name>,
  stoppedBy: Name | undefined,
): Moves<Name> {
  const start: Name[] = [];
  const skip: (readonly [Name, Name])[] = [];
  const skipped = new Set<Name>();
  const phaseOf = (name: Name): StepPhase | undefined => (skipped.has(name) ? 'skipped' : phases.get(name));
  for (const step of plan.order) {
    if (phases.get(step) !== 'waiting') continue;
    const parents = plan.dependsOn.get(step) ?? [];
    const blocker = stoppedBy ?? parents.find((parent) => isDead(phaseOf(parent)));
    if (blocker !== undefined) {
      skip.push([step, blocker]);
      skipped.add(step);
    } else if (attached.has(step) || parents.every((parent) => phases.get(parent) === 'finish')) {
      start.push(step);
    }
  }
  return { start, skip };
}

/** True when no step is waiting or running: the pipeline has its every outcome. */
export function isSettled(phases: ReadonlyMap<string, StepPhase>): boolean {
  for (const phase of phases.values()) if (phase === 'waiting' || phase === 'running') return false;
  return true;
}

import type { Observable } from 'rxjs';
import type { Client, RunEvent } from '../../index.js';
import { outputFile, thenRun, transferFiles } from '../../index.js';
import { BRIEF_FILE, REPORT_CANVAS_ID, RESEARCH_CANVAS_ID } from './demo-workflows.js';

/**
 * The demo's pipeline: the research runs its branches in parallel; its brief is downloaded from its
 * public URL and uploaded again as the input file of the report. One Observable of both runs' events;
 * unsubscribing aborts whichever execution is running.
 */
export function demoPipeline(client: Client): Observable<RunEvent> {
  return client.run(RESEARCH_CANVAS_ID).pipe(
    thenRun(client, REPORT_CANVAS_ID, async (research, { signal }) => {
      const [brief] = await transferFiles(client, [outputFile(research, BRIEF_FILE)], { signal });
      return { variables: { brief: brief === undefined ? [] : [brief.fileKey] } };
    }),
  );
}

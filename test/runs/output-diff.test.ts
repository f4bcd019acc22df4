import { describe, expect, it } from 'vitest';
import type { OutputFile } from '../../src/domain/model.js';
import { announceHeldFiles, diffOutput, initialView, runResultOf } from '../../src/runs/execution-view.js';
import { EXECUTION_ID, message, output, outputNode } from './fixtures.js';

// Readings a hostile or inconsistent server can give; the run keeps what its events said.

describe('the result keeps what the events delivered', () => {
  it('keeps a node that delivered text and is missing from the final output read', () => {
    let view = initialView(EXECUTION_ID, 'executing');
    view = diffOutput(view, output([outputNode('n1', 'finish', [message('m1', 'first answer')]), outputNode('n2', 'executing')])).view;
    view = diffOutput(view, output([outputNode('n2', 'finish', [message('m2', 'second answer')])])).view;
    const result = runResultOf(view, 'finish');
    expect(result.output.map((node) => [node.nodeId, node.status, node.messages.map((m) => m.content)])).toEqual([
      ['n1', 'finish', ['first answer']],
      ['n2', 'finish', ['second answer']],
    ]);
  });
});

describe('a file listed first without its details', () => {
  const bare: OutputFile = { name: 'report.md', type: 'text/markdown' };
  const full: OutputFile = { name: 'report.md', type: 'text/markdown', size: 12, nodeId: 'n1', url: 'http://127.0.0.1/v1/drive/file/public/df-1/report.md' };

  it('gives one file event, when its url arrives, with every detail', () => {
    let view = initialView(EXECUTION_ID, 'executing');
    const first = diffOutput(view, output([], [bare]));
    expect(first.events).toEqual([]);
    view = first.view;
    const second = diffOutput(view, output([], [full]));
    expect(second.events).toEqual([{ type: 'file', executionId: EXECUTION_ID, file: full }]);
    const third = diffOutput(second.view, output([], [full]));
    expect(third.events).toEqual([]);
    expect(runResultOf(third.view, 'finish').files).toEqual([full]);
  });

  it('announces it at the end with what is known when its url never comes', () => {
    const { view } = diffOutput(initialView(EXECUTION_ID, 'executing'), output([], [bare]));
    const last = announceHeldFiles(view);
    expect(last.events).toEqual([{ type: 'file', executionId: EXECUTION_ID, file: bare }]);
    expect(announceHeldFiles(last.view).events).toEqual([]);
  });

  it('keeps two files of one name on different nodes apart', () => {
    const other: OutputFile = { ...full, nodeId: 'n2', url: 'http://127.0.0.1/v1/drive/file/public/df-2/report.md' };
    const { events } = diffOutput(initialView(EXECUTION_ID, 'executing'), output([], [full, other]));
    expect(events.map((event) => (event.type === 'file' ? event.file.nodeId : undefined))).toEqual(['n1', 'n2']);
  });
});

describe('a file whose link is signed anew on every read', () => {
  const signed = (signature: string): OutputFile => ({
    name: 'report.md',
    type: 'text/markdown',
    size: 12,
    nodeId: 'n1',
    url: `http://127.0.0.1/v1/drive/file/public/df-1/report.md?sig=${signature}`,
  });

  it('is one file: one file event, and the result keeps its newest link; another size is another file', () => {
    const other: OutputFile = { ...signed('x'), size: 40 };
    const first = diffOutput(initialView(EXECUTION_ID, 'executing'), output([], [signed('a'), other]));
    const second = diffOutput(first.view, output([], [signed('b'), other]));
    const third = diffOutput(second.view, output([], [other, signed('c')]));
    expect([...first.events, ...second.events, ...third.events]).toEqual([
      { type: 'file', executionId: EXECUTION_ID, file: signed('a') },
      { type: 'file', executionId: EXECUTION_ID, file: other },
    ]);
    expect(runResultOf(third.view, 'finish').files).toEqual([signed('c'), other]);
  });
});

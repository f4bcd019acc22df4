/** The wire shapes the tests read, as docs/service.md describes describes them. */

export interface Envelope<T> {
  success: boolean;
  data?: T;
  errCode?: string;
  errMsg?: string;
  traceId?: string;
}

export interface FrameworkError {
  statusCode: number;
  message: string;
  error: string;
  modelResponse?: string;
}

/** Either body a JSON endpoint can answer. */
export type Answer<T> = Envelope<T> & Partial<FrameworkError>;

export interface RunData {
  executionId: string;
  status: string;
}

export interface StatusData {
  executionId: string;
  status: string;
  createdAt: string;
  nodeExecutions: { nodeId: string; status: string; title?: string; errorMessage?: string }[];
}

export interface OutputNode {
  nodeId: string;
  title?: string;
  status: string;
  errorMessage: string | null;
  startTime?: string;
  endTime?: string;
  messages: { messageId: string; content: string; reasoningContent: string | null; type: string }[];
}

export interface OutputFile {
  name: string;
  type: string;
  size: number;
  nodeId: string;
  url: string;
}

export interface OutputData {
  output: OutputNode[];
  files: OutputFile[];
}

export interface PlanData {
  title: string;
  tasks: { id: string; title: string; prompt: string; toolsets: string[]; dependentTasks?: string[] }[];
  variables: { name: string; variableType: string; required: boolean; options?: string[] }[];
}

export type SearchData = { canvasId: string; title: string }[];

export interface UploadData {
  files: { fileKey: string; fileName: string }[];
}

export interface CopilotData {
  canvasId: string;
  workflowPlan: PlanData;
}

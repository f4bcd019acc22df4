import type { PlanVariable, UploadedFile, VariableValue, Variables } from '../../src/index.js';
import { element } from './dom.js';

/** Uploads the files chosen for `resource` variables (the service takes their fileKeys, service.md §5.5). */
export type Upload = (files: readonly File[]) => Promise<UploadedFile[]>;

function control(variable: PlanVariable): HTMLInputElement | HTMLSelectElement {
  const options = variable.options ?? [];
  if (variable.variableType === 'resource') {
    const input = element('input', '');
    input.type = 'file';
    input.multiple = true;
    return input;
  }
  if (variable.variableType === 'option' || options.length > 0) {
    const select = element('select', '');
    // An optional choice may stay unset, so it gets an empty entry the run leaves out.
    if (!variable.required) select.append(new Option('(none)', ''));
    select.append(...options.map((option) => new Option(option, option)));
    return select;
  }
  return element('input', '');
}

/** One labelled field per variable of the plan, required where the plan says so. */
export function renderVariableFields(container: HTMLElement, variables: readonly PlanVariable[]): void {
  if (variables.length === 0) {
    container.replaceChildren(element('p', 'meta', 'This workflow takes no variables.'));
    return;
  }
  const fieldset = element('fieldset', '');
  fieldset.append(element('legend', '', 'Variables'));
  for (const variable of variables) {
    const field = control(variable);
    field.required = variable.required;
    field.dataset['variable'] = variable.name;
    const label = element('label', '', variable.required ? `${variable.name} (required)` : variable.name);
    label.append(field);
    fieldset.append(label);
  }
  container.replaceChildren(fieldset);
}

/** The run's variables from the fields; empty optional fields are left out, chosen files uploaded first. */
export async function readVariables(container: HTMLElement, upload: Upload): Promise<Variables> {
  const values: Record<string, VariableValue> = {};
  for (const field of container.querySelectorAll<HTMLInputElement | HTMLSelectElement>('[data-variable]')) {
    const name = field.dataset['variable'] ?? '';
    if (field instanceof HTMLInputElement && field.type === 'file') {
      const files = [...(field.files ?? [])];
      if (files.length > 0) values[name] = (await upload(files)).map((file) => file.fileKey);
    } else if (field.value !== '') {
      values[name] = field.value;
    }
  }
  return values;
}

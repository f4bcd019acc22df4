/** Locales copilot accepts (spec §4.8). */
export const COPILOT_LOCALES = ['en', 'zh-CN', 'ja', 'zh-Hant', 'fr', 'de-DE', 'ko', 'hi', 'es', 'ru', 'de', 'it', 'tr', 'pt', 'vi', 'id', 'th', 'ar', 'mn', 'fa'] as const;

export type CopilotLocale = (typeof COPILOT_LOCALES)[number];

/** The words a generated plan is titled with. */
export interface Vocabulary {
  readonly step: string;
  readonly workflow: string;
}

const ENGLISH: Vocabulary = { step: 'Step', workflow: 'Workflow' };
const GERMAN: Vocabulary = { step: 'Schritt', workflow: 'Arbeitsablauf' };

/** Translations for some locales; the others fall back to English. */
const VOCABULARIES: Partial<Record<CopilotLocale, Vocabulary>> = {
  en: ENGLISH,
  fr: { step: 'Étape', workflow: 'Flux de travail' },
  de: GERMAN,
  'de-DE': GERMAN,
  es: { step: 'Paso', workflow: 'Flujo de trabajo' },
  it: { step: 'Passo', workflow: 'Flusso di lavoro' },
  pt: { step: 'Etapa', workflow: 'Fluxo de trabalho' },
  ru: { step: 'Шаг', workflow: 'Рабочий процесс' },
  ja: { step: 'ステップ', workflow: 'ワークフロー' },
  ko: { step: '단계', workflow: '워크플로' },
  'zh-CN': { step: '步骤', workflow: '工作流' },
  'zh-Hant': { step: '步驟', workflow: '工作流程' },
};

/** The vocabulary of a locale; unknown or untranslated locales read English. */
export function vocabularyFor(locale: string | undefined): Vocabulary {
  const known = COPILOT_LOCALES.find((candidate) => candidate === locale);
  return (known === undefined ? undefined : VOCABULARIES[known]) ?? ENGLISH;
}

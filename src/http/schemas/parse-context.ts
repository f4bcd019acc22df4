import en from 'zod/v4/locales/en.js';
import type * as z from 'zod/mini';

/**
 * How every response is parsed: with zod's English messages, so that a `ResponseValidationError`
 * says what was expected (`Invalid input: expected string, received undefined`). zod/mini loads no
 * locale, and its issues would all read `Invalid input`; the messages go with each parse rather than
 * through `z.config`, which is global and would change the messages of the app's own zod.
 */
export const parseContext: z.core.ParseContext<z.core.$ZodIssue> = { error: en().localeError };
